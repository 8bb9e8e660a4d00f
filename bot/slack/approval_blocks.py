"""What approval messages show: the request a button names, the texts and Block Kit blocks of a
request, its outcome, the waiting list (Home tab) and the Reject modal.

Pure functions; the approvals part (bot.slack.approvals) posts them, the Home tab and the approver
nudges reuse them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, tzinfo
from typing import Any

from bot.chat.values import BadValue, ident, json_list, whole
from bot.slack.mrkdwn import escape
from timebot import l10n
from timebot.l10n import _
from timebot.summary import TimesheetSummary

APPROVE = "timebot_approve"
REJECT = "timebot_reject"
REJECT_CALLBACK = "timebot_reject_reason"

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


def decision_buttons(request: Request) -> list[dict[str, Any]]:
    """Approve and Reject, both naming the request."""
    value = request.encode()
    return [
        {"type": "button", "action_id": APPROVE, "style": "primary", "value": value,
         "text": {"type": "plain_text", "text": _("Approve")}},
        {"type": "button", "action_id": REJECT, "style": "danger", "value": value,
         "text": {"type": "plain_text", "text": _("Reject")}},
    ]


STATUS_WORDS = {"d": "draft", "s": "submitted", "a": "approved", "r": "rejected"}


def status_word(code: Any) -> str | None:
    """The service's status codes (d, s, a, r) as words; a word stays itself."""
    if code is None:
        return None
    return STATUS_WORDS.get(str(code), str(code))


def ref_of(submit_id: str, stage: int, approver_id: str) -> str:
    return f"approval:{submit_id}:{stage}:{approver_id}"


def parse_ref(ref: str) -> tuple[str, int, str] | None:
    parts = ref.split(":")
    if len(parts) != 4 or parts[0] != "approval":
        return None
    return parts[1], int(parts[2]), parts[3]


def slack_time(ms: int) -> str:
    """A time every reader sees in their own time zone."""
    seconds = ms // 1000
    fallback = l10n.format_datetime(ms, replace(l10n.current(), time_zone="UTC"))
    shown = _("{date} at {time}").format(date="{date_short_pretty}", time="{time}")
    return f"<!date^{seconds}^{shown}|{fallback}>"


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


def summary_text(summary: TimesheetSummary) -> str:
    local = _localised()

    def day_of(day: Any) -> str:
        return f"{day:%a %d}" if local is None else l10n.format_day(day, local)

    lines = ["*" + _("Total {total}").format(total=hours(summary.total_ms)) + "*"]
    if summary.by_day:
        lines.append(_("*By day:* {days}").format(days=", ".join(
            f"{day_of(day)} {hours(ms)}" for day, ms in summary.by_day)))
    if summary.by_project:
        lines.append(_("*By project:* {projects}").format(projects=", ".join(
            f"{escape(name)} {hours(ms)}" for name, ms in summary.by_project)))
    if summary.absences:
        lines.append(_("*Absences:* {absences}").format(absences=", ".join(
            f"{escape(name)} {hours(ms)}" for name, ms in summary.absences)))
    if summary.changed_since_rejection:
        lines.append(_(
            "*Changed since the rejection:* {added} added, {modified} modified, {deleted} "
            "deleted").format(added=summary.added, modified=summary.modified,
                              deleted=summary.deleted))
    return "\n".join(lines)


def request_blocks(
    request: Request, person_name: str, stage_text: str, summary: str
) -> tuple[str, list[dict[str, Any]]]:
    period = period_text(request.start_ms, request.end_ms)
    person_name = escape(person_name)
    text = _("{person} submitted the timesheet for {period}: waiting for your approval").format(
        person=person_name, period=period)
    return text, [
        {"type": "section", "text": {"type": "mrkdwn", "text": _(
            "*{person}* submitted the timesheet for *{period}* ({stage}).").format(
            person=person_name, period=period, stage=stage_text)}},
        {"type": "section", "text": {"type": "mrkdwn", "text": summary}},
        {"type": "actions", "block_id": "decision", "elements": decision_buttons(request)},
    ]


def outcome_blocks(
    person_name: str, start_ms: int, end_ms: int, outcome: str
) -> tuple[str, list[dict[str, Any]]]:
    """`outcome` is mrkdwn already (outcome_for escapes the names and the comment in it)."""
    period = period_text(start_ms, end_ms)
    person_name = escape(person_name)
    text = _("Timesheet of {person} for {period}: {outcome}").format(
        person=person_name, period=period, outcome=outcome)
    return text, [{"type": "section", "text": {"type": "mrkdwn", "text": _(
        "Timesheet of *{person}* for *{period}*").format(person=person_name, period=period)
        + f"\n{outcome}"}}]


def reject_view(request: Request, channel: str) -> dict[str, Any]:
    return {
        "type": "modal",
        "callback_id": REJECT_CALLBACK,
        "private_metadata": json.dumps({"request": request.encode(), "channel": channel}),
        "title": {"type": "plain_text", "text": _("Reject timesheet")},
        "submit": {"type": "plain_text", "text": _("Reject")},
        "close": {"type": "plain_text", "text": _("Cancel")},
        "blocks": [{
            "type": "input", "block_id": "reason",
            "label": {"type": "plain_text", "text": _("Reason (the person sees it)")},
            "element": {"type": "plain_text_input", "action_id": "value", "multiline": True},
        }],
    }


def pending_blocks(items: Sequence[tuple[Request, str, str]]) -> list[dict[str, Any]]:
    """Home tab / digest: each waiting request with the same buttons."""
    blocks: list[dict[str, Any]] = []
    for request, person_name, total in items:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": (
            f"*{escape(person_name)}* - {period_text(request.start_ms, request.end_ms)}"
            f" - {total}")}})
        blocks.append({"type": "actions", "elements": decision_buttons(request)})
    return blocks
