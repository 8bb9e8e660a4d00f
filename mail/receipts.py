"""Receipts: the answer to an approver's reply, in the same thread (shared/contract.md, Mail).

- `In-Reply-To` = the reply's Message-ID, `References` = the reply's References (or its
  In-Reply-To) followed by its Message-ID, `Subject: Re: <thread subject>`, envelope sender `<>`,
  `Auto-Submitted: auto-replied`; a text and an HTML part whose first line is exactly one of
  `Approved`, `Rejected` (with the reason), `Nothing changed` (with why and what to do).

What a receipt says is an `Outcome` (pure: built by the functions below, rendered by
`compose_receipt`); `mail.receipt_sender.ReceiptSender` queues it, once per reply.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from email.message import EmailMessage
from enum import Enum

from mail.outbound import new_message
from mail.reading import ReadMessage
from timebot.periods_local import local_period
from timebot.stages import stage_label
from timebot.tokens import message_id as token_message_id
from timebot.tokens import reply_address

__all__ = [
    "Outcome",
    "TimesheetInfo",
    "Verdict",
    "compose_receipt",
    "thread_subject",
]


class Verdict(Enum):
    APPROVED = "Approved"
    REJECTED = "Rejected"
    NOTHING_CHANGED = "Nothing changed"


@dataclass(frozen=True)
class TimesheetInfo:
    """Which timesheet a receipt is about (for people, not for machines)."""

    person_name: str
    start_ms: int
    end_ms: int
    time_zone: str = "UTC"  # the owner's: the period's dates are theirs

    @property
    def period(self) -> str:
        return local_period(self.start_ms, self.end_ms, self.time_zone)

    def describe(self) -> str:
        return f"the timesheet of {self.person_name} for {self.period}"


def stage_words(stage: int, count: int, stage_type: str | None) -> str:
    """`stage 1 of 2 (People managers)` — counted from 1 for people (`timebot.stages`)."""
    return stage_label(stage, count, stage_type)


@dataclass(frozen=True)
class Outcome:
    """What happened to a reply, and so what its receipt says.

    `code`: approved, rejected, comment-added, reason-missing, not-your-turn, stage-moved-on,
    already-decided, superseded, wrong-sender, link-expired, unknown-link, empty-reply,
    refused (other handlers may add their own). A sender who did not authenticate gets none of
    them (mail.process `answer`)."""

    verdict: Verdict
    code: str
    why: str
    todo: str = ""
    reason: str = ""  # the rejection reason

    @property
    def is_error(self) -> bool:
        """A refusal: rate-limited to one receipt per sender per hour."""
        return self.verdict is Verdict.NOTHING_CHANGED and self.code != "comment-added"


# --- the catalogue --------------------------------------------------------------------------

DECIDE_HINT = "reply with approve, or with reject followed by the reason"


def approved(sheet: TimesheetInfo, stage: str, fully: bool, next_stage: str | None) -> Outcome:
    then = (
        "It is now approved."
        if fully
        else f"It now waits for {next_stage}." if next_stage else "It now waits for the others."
    )
    return Outcome(Verdict.APPROVED, "approved", f"You approved {sheet.describe()} at {stage}. "
                   f"{then}")


def rejected(sheet: TimesheetInfo, reason: str) -> Outcome:
    return Outcome(
        Verdict.REJECTED, "rejected",
        f"You rejected {sheet.describe()}. {sheet.person_name} has been told why and can "
        "correct and resubmit it.",
        reason=reason,
    )


def comment_added(sheet: TimesheetInfo) -> Outcome:
    return Outcome(
        Verdict.NOTHING_CHANGED, "comment-added",
        f"Your message was added to the Journal of {sheet.describe()}; its approval did not "
        "change.",
        f"To decide, {DECIDE_HINT}.",
    )


def reason_missing(sheet: TimesheetInfo) -> Outcome:
    return Outcome(
        Verdict.NOTHING_CHANGED, "reason-missing",
        f"A rejection needs a reason, and your reply gave none: {sheet.describe()} was not "
        "rejected.",
        "Reply again with reject followed by the reason, for example: "
        "reject - Tuesday's hours are missing.",
    )


def empty_reply(sheet: TimesheetInfo) -> Outcome:
    return Outcome(
        Verdict.NOTHING_CHANGED, "empty-reply",
        f"Your reply had no text of its own (only the quoted e-mail), so nothing was done with "
        f"{sheet.describe()}.",
        f"Write your answer above the quoted e-mail: {DECIDE_HINT}.",
    )


def not_your_turn(sheet: TimesheetInfo, where: str, waiting: str) -> Outcome:
    return Outcome(
        Verdict.NOTHING_CHANGED, "not-your-turn",
        f"It is not your turn: {sheet.describe()} is at {where}"
        + (f", waiting for {waiting}" if waiting else "") + ".",
        "nothing now; you will get a review e-mail when it is your turn.",
    )


def stage_moved_on(sheet: TimesheetInfo, yours: str, where: str) -> Outcome:
    return Outcome(
        Verdict.NOTHING_CHANGED, "stage-moved-on",
        f"{yours[:1].upper()}{yours[1:]} of {sheet.describe()} has already been decided; the "
        f"timesheet has moved on to {where}.",
        "nothing; your stage is done.",
    )


def already_decided(sheet: TimesheetInfo, what: str, todo: str) -> Outcome:
    return Outcome(
        Verdict.NOTHING_CHANGED, "already-decided",
        f"{sheet.describe()[:1].upper()}{sheet.describe()[1:]} {what}.", todo,
    )


def superseded(sheet: TimesheetInfo) -> Outcome:
    return Outcome(
        Verdict.NOTHING_CHANGED, "superseded",
        f"This review request is out of date: {sheet.describe()} has been resubmitted (or "
        "withdrawn) since it was sent.",
        "Answer the newest review e-mail for this timesheet.",
    )


def wrong_sender(address: str) -> Outcome:
    return Outcome(
        Verdict.NOTHING_CHANGED, "wrong-sender",
        f"This review request was sent to another approver; a reply from {address} cannot "
        "answer it.",
        "Answer the review e-mail that was sent to you, from the address timebot knows you by.",
    )


def link_expired(expired_ms: int) -> Outcome:
    when = datetime.fromtimestamp(expired_ms / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")
    return Outcome(
        Verdict.NOTHING_CHANGED, "link-expired",
        f"The reply address of this review e-mail expired on {when}.",
        "Answer the newest review e-mail or reminder for this timesheet, or decide in the "
        "time tracking service.",
    )


def unknown_link(detail: str) -> Outcome:
    return Outcome(
        Verdict.NOTHING_CHANGED, "unknown-link",
        f"We could not tell which timesheet this reply is about ({detail}).",
        "Reply to the review e-mail itself and keep its reply address.",
    )


def account_inactive() -> Outcome:
    return Outcome(
        Verdict.NOTHING_CHANGED, "account-inactive",
        "Your organisation's subscription is inactive, so the time tracking service refuses "
        "every request for now.",
        "Ask an administrator to reactivate the subscription, then reply again.",
    )


def refused(sheet: TimesheetInfo, message: str) -> Outcome:
    return Outcome(
        Verdict.NOTHING_CHANGED, "refused",
        f"The time tracking service refused to change {sheet.describe()}: {message}",
        "Check the timesheet in the time tracking service.",
    )


# --- composing ------------------------------------------------------------------------------

_REPLY_PREFIX = re.compile(r"^\s*(?:re|aw|sv|antw|ref|rif|r)\s*(?:\[\d+\])?\s*:\s*", re.I)


def thread_subject(subject: str) -> str:
    """The subject without its reply prefixes (`Re: Re: AW: x` -> `x`)."""
    text = " ".join(subject.split())
    while True:
        stripped = _REPLY_PREFIX.sub("", text, count=1)
        if stripped == text:
            return text
        text = stripped


def receipt_text(outcome: Outcome) -> str:
    lines = [outcome.verdict.value, "", outcome.why]
    if outcome.reason:
        lines += ["", "Reason:", *[f"  {line}" for line in outcome.reason.splitlines()]]
    if outcome.todo:
        lines += ["", f"What to do: {outcome.todo}"]
    lines += ["", "-- ", "timebot (this is an automatic answer to your e-mail)"]
    return "\n".join(lines) + "\n"


def receipt_html(outcome: Outcome) -> str:
    parts = [
        f"<p><strong>{html.escape(outcome.verdict.value)}</strong></p>",
        "<p>" + "<br>".join(html.escape(line) for line in outcome.why.splitlines()) + "</p>",
    ]
    if outcome.reason:
        reason = "<br>".join(html.escape(line) for line in outcome.reason.splitlines())
        parts.append(f"<p>Reason:</p><blockquote>{reason}</blockquote>")
    if outcome.todo:
        parts.append(f"<p>What to do: {html.escape(outcome.todo)}</p>")
    parts.append("<p style=\"color:#666\">timebot (this is an automatic answer to your "
                 "e-mail)</p>")
    body = "\n".join(parts)
    return f"<!DOCTYPE html>\n<html><body>\n{body}\n</body></html>\n"


def compose_receipt(
    outcome: Outcome,
    reply: ReadMessage,
    *,
    to: str,
    mail_from: str,
    mail_domain: str,
    token: str | None = None,
) -> EmailMessage:
    """The receipt for `reply` (pure). With the reply's valid `token`, the receipt's Message-ID
    and Reply-To carry it, so that answering the receipt reaches the same timesheet."""
    headers = {"Auto-Submitted": "auto-replied", "X-Auto-Response-Suppress": "All"}
    if reply.message_id:
        headers["In-Reply-To"] = reply.message_id
        parents = list(reply.references) or list(reply.in_reply_to[-1:])
        headers["References"] = " ".join([*parents, reply.message_id])
    if token is not None:
        headers["Reply-To"] = reply_address(token, mail_domain)
    subject = thread_subject(reply.subject) or "your reply"
    return new_message(
        mail_from=mail_from,
        to=to,
        subject=f"Re: {subject}",
        text=receipt_text(outcome),
        html=receipt_html(outcome),
        message_id=token_message_id(token, mail_domain) if token else None,
        mail_domain=mail_domain,
        headers=headers,
    )
