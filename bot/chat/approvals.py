"""Approvals in chat, platform-neutral: what a button names (`Request`), the review request
message and its outcome message, and the pure rules: what a request message becomes once the
service reports a decision, whatever decided it (`outcome_for`), and why a person may not
decide (`refusal_reason`, `may_try`). Deciding itself, claimed once as the person with their
own key, is bot.chat.deciding.

Texts are in the language in force (`l10n.using`) and in the chat markup (bot.chat.markup):
every function that writes a name, a comment or a moment takes the adapter's `Markup`.

    message = request_message(request, "Ann", "stage 1 of 2", summary_text(summary, markup),
                              markup)       # Approve / Reject actions naming the request
    outcome = outcome_for(event.data, stage, approver_id, now_ms, markup)
    if outcome is not None:                 # the message no longer waits for that approver
        shown = outcome_message(name, start_ms, end_ms, outcome, markup)

A request message's `ref_of(submit id, stage, approver)` is what finds it again when the event
comes (the sender's rows, a Teams conversation reference store).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, tzinfo
from typing import Any

from bot.chat.markup import Markup
from bot.chat.message import Action, Block, Fact, Message
from bot.chat.values import BadValue, ident, json_list, whole
from timebot import l10n
from timebot.l10n import N_, _
from timebot.notify.decisions import ReviewRequest
from timebot.notify.escalations import ClimbRequest
from timebot.summary import TimesheetSummary

APPROVE = "timebot_approve"
REJECT = "timebot_reject"
DECISION = "decision"  # the group of the Approve / Reject actions


@dataclass(frozen=True)
class Request:
    """What a button names: the submission, its stage, the timesheet and its period."""

    submit_id: str
    stage: int
    timesheet_id: str
    person_id: str
    start_ms: int
    end_ms: int

    def encode(self) -> str:
        return json.dumps([self.submit_id, self.stage, self.timesheet_id, self.person_id,
                           self.start_ms, self.end_ms], separators=(",", ":"))

    @classmethod
    def decode(cls, value: str) -> Request:
        """The request a button names, or BadValue when the value is not one `encode` wrote."""
        s, g, t, p, a, b = json_list(value, (6,))
        start, end = whole(a), whole(b)
        if end <= start:
            raise BadValue("the period ends before it starts")
        return cls(ident(s), whole(g), ident(t, empty=True), ident(p), start, end)


def request_of(asking: ReviewRequest | ClimbRequest, timesheet_id: str = "") -> Request:
    """What the buttons of a review request (or of a climbing reminder: no timesheet) name."""
    summary = asking.summary
    return Request(asking.submit_id, asking.stage, timesheet_id, summary.person_id,
                   summary.start_ms, summary.end_ms)


def decision_actions(request: Request) -> tuple[Action, ...]:
    """Approve and Reject, both naming the request (Reject asks for a reason: the adapter's
    form, then `deciding.decide` with the comment)."""
    value = request.encode()
    return (Action(APPROVE, _("Approve"), value, "primary"),
            Action(REJECT, _("Reject"), value, "danger"))


STATUS_WORDS = {"d": "draft", "s": "submitted", "a": "approved", "r": "rejected"}


def status_word(code: Any) -> str | None:
    """The service's status codes (d, s, a, r) as words; a word stays itself."""
    if code is None:
        return None
    return STATUS_WORDS.get(str(code), str(code))


REQUEST_REF = "approval:"  # what every request message's ref starts with


def ref_of(submit_id: str, stage: int, approver_id: str) -> str:
    return f"{REQUEST_REF}{submit_id}:{stage}:{approver_id}"


def parse_ref(ref: str) -> tuple[str, int, str] | None:
    parts = ref.split(":")
    if len(parts) != 4 or parts[0] != "approval":
        return None
    return parts[1], int(parts[2]), parts[3]


def _localised() -> l10n.Localisation | None:
    """The reader's localisation where it differs from the house style (English, no date
    format chosen), else None. Texts are in the language in force (`l10n.using`)."""
    local = l10n.current()
    return local if local.lang != "en" or local.date_format else None


def hours(ms: int) -> str:
    return l10n.format_duration(ms, l10n.current())


def period_text(start_ms: int, end_ms: int, zone: tzinfo = UTC) -> str:
    """`Mon 16 Nov - Sun 22 Nov 2026`, the days in `zone` (the period's: UTC for a UTC week),
    in the reader's language and date format where they chose one."""
    local = _localised()
    if local is not None:
        return l10n.format_period(start_ms, end_ms,
                                  replace(local, time_zone=getattr(zone, "key", "UTC")))
    start = datetime.fromtimestamp(start_ms / 1000, zone).date()
    last = datetime.fromtimestamp((end_ms - 1) / 1000, zone).date()
    return f"{start:%a %d %b}" if start == last else f"{start:%a %d %b} - {last:%a %d %b %Y}"


def summary_text(summary: TimesheetSummary, markup: Markup) -> str:
    """The timesheet's total, by day, by project, absences and changes (chat markup)."""
    local = _localised()

    def day_of(day: Any) -> str:
        return f"{day:%a %d}" if local is None else l10n.format_day(day, local)

    lines = ["*" + _("Total {total}").format(total=hours(summary.total_ms)) + "*"]
    if summary.by_day:
        lines.append(_("*By day:* {days}").format(days=", ".join(
            f"{day_of(day)} {hours(ms)}" for day, ms in summary.by_day)))
    if summary.by_project:
        lines.append(_("*By project:* {projects}").format(projects=", ".join(
            f"{markup.escape(name)} {hours(ms)}" for name, ms in summary.by_project)))
    if summary.absences:
        lines.append(_("*Absences:* {absences}").format(absences=", ".join(
            f"{markup.escape(name)} {hours(ms)}" for name, ms in summary.absences)))
    if summary.changed_since_rejection:
        lines.append(_(
            "*Changed since the rejection:* {added} added, {modified} modified, {deleted} "
            "deleted").format(added=summary.added, modified=summary.modified,
                              deleted=summary.deleted))
    return "\n".join(lines)


def request_message(request: Request, person_name: str, stage_text: str, summary: str,
                    markup: Markup) -> Message:
    """The review request: who submitted which period at which stage, the summary (chat
    markup, `summary_text`), and Approve / Reject."""
    period = period_text(request.start_ms, request.end_ms)
    name = markup.escape(person_name)
    text = _("{person} submitted the timesheet for {period}: waiting for your approval").format(
        person=name, period=period)
    return Message(text, (
        Block(_("*{person}* submitted the timesheet for *{period}* ({stage}).").format(
            person=name, period=period, stage=stage_text)),
        Block(summary),
        Block(actions=decision_actions(request), group=DECISION),
    ), facts=(Fact("person", person_name), Fact("period", period), Fact("stage", stage_text)))


def outcome_message(person_name: str, start_ms: int, end_ms: int, outcome: str,
                    markup: Markup) -> Message:
    """What a request message becomes once decided: `outcome` (from `outcome_for`, chat
    markup already) under whose timesheet for which period."""
    period = period_text(start_ms, end_ms)
    name = markup.escape(person_name)
    text = _("Timesheet of {person} for {period}: {outcome}").format(
        person=name, period=period, outcome=outcome)
    return Message(text, (Block(_("Timesheet of *{person}* for *{period}*").format(
        person=name, period=period) + f"\n{outcome}"),),
        facts=(Fact("person", person_name), Fact("period", period)))


def outcome_for(data: dict[str, Any], ref_stage: int, approver_id: str, now_ms: int,
                markup: Markup) -> str | None:
    """What a request message (of `ref_stage`, shown to `approver_id`) becomes after the
    service's approval event `data`, or None when it still waits for that approver."""
    status = status_word(data.get("status"))
    by = markup.escape((data.get("by") or {}).get("name") or _("someone"))
    at = markup.time(now_ms)
    action = data.get("action")
    approved_by = _("Approved by {by} at {at}").format(by=by, at=at)
    if status == "approved":
        if action == "autoApproved":
            return _("Approved automatically at {at}").format(at=at)
        return approved_by
    if status == "rejected":
        reason = markup.escape((data.get("comment") or "").strip())
        return _("Rejected by {by} at {at}").format(by=by, at=at) + (
            f": {reason}" if reason else "")
    if status in ("draft", "open", None) or action in ("withdrawn", "reopened"):
        return _("No longer waiting for approval ({why}) since {at}").format(
            why=action or status, at=at)
    if action == "restarted":
        return _("Changed by {by} at {at}: the approval starts again").format(by=by, at=at)
    stage = int(data.get("stage") or 0)
    pending = {p.get("id") for p in data.get("pendingApprovers") or []}
    if ref_stage < stage:
        return approved_by if action == "approved" else _("Stage done at {at}").format(at=at)
    if ref_stage == stage and approver_id not in pending and action == "approved":
        return approved_by
    return None


SERVICE_REFUSED = N_("The service refused the decision.")


def refusal_reason(state: dict[str, Any] | None, request: Request, person_id: str,
                   markup: Markup) -> str:
    """Why this person may not decide this request now (shown only to them), from the
    approval state read with the integration key (`deciding.approval_state`)."""
    if not state or not state.get("submitId"):
        return _("This timesheet is no longer waiting for approval.")
    if state.get("submitId") != request.submit_id:
        return _("This request is out of date: the timesheet was submitted again since.")
    status = status_word(state.get("status"))
    if status == "approved":
        return _("This timesheet is already approved.")
    if status == "rejected":
        return _("This timesheet was already rejected.")
    if status != "submitted":
        return _("This timesheet is no longer waiting for approval.")
    pending = state.get("pendingApprovers") or []
    if int(state.get("currentStage") or 0) != request.stage:
        return _("This stage was already decided; the timesheet has moved on.")
    if person_id not in {p.get("id") for p in pending}:
        names = ", ".join(markup.escape(p.get("name")) for p in pending) or _("nobody")
        return _("You are not an approver of this stage: it waits for {names}.").format(
            names=names)
    return _(SERVICE_REFUSED)


def may_try(state: dict[str, Any] | None, request: Request) -> bool:
    """Whether asking for a reason to reject is worth it: admins and last-stage approvers may
    also reject later (the service decides those); the plain refusals are answered at once."""
    if not state or state.get("submitId") != request.submit_id:
        return False
    return status_word(state.get("status")) in ("approved", "submitted")


def waiting_blocks(items: Sequence[tuple[Request, str, str]], markup: Markup
                   ) -> tuple[Block, ...]:
    """What waits for an approver (the Home view, a digest): each request (its person's name,
    its period, its total) with Approve / Reject."""
    return tuple(Block(f"*{markup.escape(name)}* - {period_text(r.start_ms, r.end_ms)} - {total}",
                       decision_actions(r)) for r, name, total in items)
