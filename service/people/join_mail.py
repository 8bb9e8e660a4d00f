"""The texts of the invitation and sign-up e-mails, from a dict of values.

Each is one function of its values (what a template of the organisation's e-mail templates,
Invite and Signup, would be given), so that the template registry can take their place
without touching the callers: `invite_mail(values)`, `signup_mail(values)` ->
`MailText(subject, body)`.

Invite values: `person_name`, `organisation_name`, `inviter_name`, `link`, `expires`
(a date, UTC). Signup values: `name`, `organisation_name`, `code` (6 digits), `link`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class MailText:
    subject: str
    body: str


def invite_mail(values: Mapping[str, str]) -> MailText:
    return MailText(
        subject=f"{values['inviter_name']} invites you to {values['organisation_name']} "
        "on timebot",
        body=(
            f"Hello {values['person_name']},\n\n"
            f"{values['inviter_name']} invites you to track your time with "
            f"{values['organisation_name']}. Open this link to join:\n\n"
            f"    {values['link']}\n\n"
            f"The link can be used once, until {values['expires']}. Later, sign in with "
            "your e-mail address: a code is sent to it each time.\n"
        ),
    )


def signup_mail(values: Mapping[str, str]) -> MailText:
    return MailText(
        subject=f"Your timebot sign-up code: {values['code']}",
        body=(
            f"Hello {values['name']},\n\n"
            f"to create the organisation {values['organisation_name']}, enter this code "
            f"in the browser that asked for it:\n\n    {values['code']}\n\n"
            f"(or at {values['link']}). It is valid for 5 minutes and can be used once. "
            "If you did not ask to sign up, ignore this message: nothing is created "
            "without the code.\n"
        ),
    )
