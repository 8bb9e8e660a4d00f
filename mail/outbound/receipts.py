"""Receipts: the answer to an approver's reply, in the same thread (shared/contract.md, Mail).

- `In-Reply-To` = the reply's Message-ID, `References` = the reply's References (or its
  In-Reply-To) followed by its Message-ID, `Subject: Re: <thread subject>`, envelope sender `<>`,
  `Auto-Submitted: auto-replied`; a text and an HTML part whose first line is exactly one of
  `Approved`, `Rejected` (with the reason), `Nothing changed` (with why and what to do).

What a receipt says is an `Outcome` (pure: built by the functions below, rendered by
`compose_receipt`); `mail.outbound.receipt_sender.ReceiptSender` queues it, once per reply.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, replace
from email.message import EmailMessage
from enum import Enum

from mail.queues.outbox import new_message
from mail.reading.message import ReadMessage
from timebot.l10n import _, current, format_datetime, format_period
from timebot.secret_key.tokens import message_id as token_message_id
from timebot.secret_key.tokens import reply_address
from timebot.stages import stage_label

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
        """In the reader's date format, the owner's time zone."""
        return format_period(self.start_ms, self.end_ms,
                             replace(current(), time_zone=self.time_zone), named=False)

    def describe(self) -> str:
        return _("the timesheet of {person} for {period}").format(
            person=self.person_name, period=self.period)


def stage_words(stage: int, count: int, stage_type: str | None) -> str:
    """`stage 1 of 2 (People managers)` — counted from 1 for people (`timebot.stages`)."""
    return stage_label(stage, count, stage_type)


@dataclass(frozen=True)
class Outcome:
    """What happened to a reply, and so what its receipt says.

    `code`: approved, rejected, comment-added, reason-missing, not-your-turn, stage-moved-on,
    already-decided, superseded, wrong-sender, link-expired, unknown-link, empty-reply,
    refused (other handlers may add their own). A sender who did not authenticate gets none of
    them (mail.inbound.process `answer`)."""

    verdict: Verdict
    code: str
    why: str
    todo: str = ""
    reason: str = ""  # the rejection reason

    @property
    def is_error(self) -> bool:
        """A refusal: rate-limited to one receipt per sender per hour."""
        return self.verdict is Verdict.NOTHING_CHANGED and self.code != "comment-added"


# --- the catalogue ---------------------------------------------------------------------------
# In the reader's language (`timebot.l10n`, set by the handler): `_` translates each sentence,
# its parts filled in after.


def decide_hint() -> str:
    return _("reply with approve, or with reject followed by the reason")


def approved(sheet: TimesheetInfo, stage: str, fully: bool, next_stage: str | None) -> Outcome:
    then = (
        _("It is now approved.")
        if fully
        else _("It now waits for {next}.").format(next=next_stage) if next_stage
        else _("It now waits for the others.")
    )
    return Outcome(Verdict.APPROVED, "approved", _("You approved {sheet} at {stage}.").format(
        sheet=sheet.describe(), stage=stage) + f" {then}")


def rejected(sheet: TimesheetInfo, reason: str) -> Outcome:
    return Outcome(
        Verdict.REJECTED, "rejected",
        _("You rejected {sheet}. {person} has been told why and can correct and resubmit "
          "it.").format(sheet=sheet.describe(), person=sheet.person_name),
        reason=reason,
    )


def comment_added(sheet: TimesheetInfo) -> Outcome:
    return Outcome(
        Verdict.NOTHING_CHANGED, "comment-added",
        _("Your message was added to the Journal of {sheet}; its approval did not "
          "change.").format(sheet=sheet.describe()),
        _("To decide, {hint}.").format(hint=decide_hint()),
    )


def reason_missing(sheet: TimesheetInfo) -> Outcome:
    return Outcome(
        Verdict.NOTHING_CHANGED, "reason-missing",
        _("A rejection needs a reason, and your reply gave none: {sheet} was not "
          "rejected.").format(sheet=sheet.describe()),
        _("Reply again with reject followed by the reason, for example: "
          "reject - Tuesday's hours are missing."),
    )


def empty_reply(sheet: TimesheetInfo) -> Outcome:
    return Outcome(
        Verdict.NOTHING_CHANGED, "empty-reply",
        _("Your reply had no text of its own (only the quoted e-mail), so nothing was done "
          "with {sheet}.").format(sheet=sheet.describe()),
        _("Write your answer above the quoted e-mail: {hint}.").format(hint=decide_hint()),
    )


def not_your_turn(sheet: TimesheetInfo, where: str, waiting: str) -> Outcome:
    why = (_("It is not your turn: {sheet} is at {where}, waiting for {waiting}.") if waiting
           else _("It is not your turn: {sheet} is at {where}."))
    return Outcome(
        Verdict.NOTHING_CHANGED, "not-your-turn",
        why.format(sheet=sheet.describe(), where=where, waiting=waiting),
        _("nothing now; you will get a review e-mail when it is your turn."),
    )


def stage_moved_on(sheet: TimesheetInfo, yours: str, where: str) -> Outcome:
    text = _("{yours} of {sheet} has already been decided; the timesheet has moved on to "
             "{where}.").format(yours=yours, sheet=sheet.describe(), where=where)
    return Outcome(
        Verdict.NOTHING_CHANGED, "stage-moved-on", f"{text[:1].upper()}{text[1:]}",
        _("nothing; your stage is done."),
    )


def already_decided(sheet: TimesheetInfo, what: str, todo: str, **fields: str) -> Outcome:
    """`what` is a whole sentence about `{sheet}` (and `fields`), already translated."""
    text = what.format(sheet=sheet.describe(), **fields)
    return Outcome(
        Verdict.NOTHING_CHANGED, "already-decided", f"{text[:1].upper()}{text[1:]}", todo,
    )


def superseded(sheet: TimesheetInfo) -> Outcome:
    return Outcome(
        Verdict.NOTHING_CHANGED, "superseded",
        _("This review request is out of date: {sheet} has been resubmitted (or withdrawn) "
          "since it was sent.").format(sheet=sheet.describe()),
        _("Answer the newest review e-mail for this timesheet."),
    )


def wrong_sender(address: str) -> Outcome:
    return Outcome(
        Verdict.NOTHING_CHANGED, "wrong-sender",
        _("This review request was sent to another approver; a reply from {address} cannot "
          "answer it.").format(address=address),
        _("Answer the review e-mail that was sent to you, from the address timebot knows you "
          "by."),
    )


def link_expired(expired_ms: int) -> Outcome:
    when = format_datetime(expired_ms, replace(current(), time_zone="UTC"))
    return Outcome(
        Verdict.NOTHING_CHANGED, "link-expired",
        _("The reply address of this review e-mail expired on {when}.").format(when=when),
        _("Answer the newest review e-mail or reminder for this timesheet, or decide in the "
          "time tracking service."),
    )


def unknown_link(detail: str) -> Outcome:
    return Outcome(
        Verdict.NOTHING_CHANGED, "unknown-link",
        _("We could not tell which timesheet this reply is about ({detail}).").format(
            detail=detail),
        _("Reply to the review e-mail itself and keep its reply address."),
    )


def account_inactive() -> Outcome:
    return Outcome(
        Verdict.NOTHING_CHANGED, "account-inactive",
        _("Your organisation's subscription is inactive, so the time tracking service refuses "
          "every request for now."),
        _("Ask an administrator to reactivate the subscription, then reply again."),
    )


def refused(sheet: TimesheetInfo, message: str) -> Outcome:
    return Outcome(
        Verdict.NOTHING_CHANGED, "refused",
        _("The time tracking service refused to change {sheet}: {message}").format(
            sheet=sheet.describe(), message=message),
        _("Check the timesheet in the time tracking service."),
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
    # The first line is the contract's word (Approved / Rejected / Nothing changed) in every
    # language: machines read it; the rest is in the reader's.
    lines = [outcome.verdict.value, "", outcome.why]
    if outcome.reason:
        lines += ["", _("Reason:"), *[f"  {line}" for line in outcome.reason.splitlines()]]
    if outcome.todo:
        lines += ["", _("What to do: {todo}").format(todo=outcome.todo)]
    lines += ["", "-- ", _("timebot (this is an automatic answer to your e-mail)")]
    return "\n".join(lines) + "\n"


def receipt_html(outcome: Outcome) -> str:
    parts = [
        f"<p><strong>{html.escape(outcome.verdict.value)}</strong></p>",
        "<p>" + "<br>".join(html.escape(line) for line in outcome.why.splitlines()) + "</p>",
    ]
    if outcome.reason:
        reason = "<br>".join(html.escape(line) for line in outcome.reason.splitlines())
        parts.append(f"<p>{html.escape(_('Reason:'))}</p><blockquote>{reason}</blockquote>")
    if outcome.todo:
        todo = _("What to do: {todo}").format(todo=outcome.todo)
        parts.append(f"<p>{html.escape(todo)}</p>")
    footer = html.escape(_("timebot (this is an automatic answer to your e-mail)"))
    parts.append(f"<p style=\"color:#666\">{footer}</p>")
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
    subject = thread_subject(reply.subject) or _("your reply")
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
