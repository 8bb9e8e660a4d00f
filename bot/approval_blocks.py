"""What approval messages show: the request a button names, the texts and Block Kit blocks of a
request, its outcome, the waiting list (Home tab) and the Reject modal.

Pure functions; the approvals part (bot.approvals) posts them, the Home tab and the approver
nudges reuse them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Any

from bot.mrkdwn import escape
from bot.values import BadValue, ident, json_list, whole
from timebot.summary import TimesheetSummary, hours

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
         "text": {"type": "plain_text", "text": "Approve"}},
        {"type": "button", "action_id": REJECT, "style": "danger", "value": value,
         "text": {"type": "plain_text", "text": "Reject"}},
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
    fallback = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"<!date^{seconds}^{{date_short_pretty}} at {{time}}|{fallback}>"


def period_text(start_ms: int, end_ms: int, zone: tzinfo = UTC) -> str:
    """`Mon 16 Nov - Sun 22 Nov 2026`, the days in `zone` (the period's: UTC for a UTC week)."""
    start = datetime.fromtimestamp(start_ms / 1000, zone).date()
    last = datetime.fromtimestamp((end_ms - 1) / 1000, zone).date()
    return f"{start:%a %d %b}" if start == last else f"{start:%a %d %b} - {last:%a %d %b %Y}"


def summary_text(summary: TimesheetSummary) -> str:
    lines = [f"*Total {hours(summary.total_ms)}*"]
    if summary.by_day:
        lines.append("*By day:* " + ", ".join(
            f"{day:%a %d} {hours(ms)}" for day, ms in summary.by_day))
    if summary.by_project:
        lines.append("*By project:* " + ", ".join(
            f"{escape(name)} {hours(ms)}" for name, ms in summary.by_project))
    if summary.absences:
        lines.append("*Absences:* " + ", ".join(
            f"{escape(name)} {hours(ms)}" for name, ms in summary.absences))
    if summary.changed_since_rejection:
        lines.append(
            f"*Changed since the rejection:* {summary.added} added, {summary.modified} "
            f"modified, {summary.deleted} deleted"
        )
    return "\n".join(lines)


def request_blocks(
    request: Request, person_name: str, stage_text: str, summary: str
) -> tuple[str, list[dict[str, Any]]]:
    period = period_text(request.start_ms, request.end_ms)
    person_name = escape(person_name)
    text = f"{person_name} submitted the timesheet for {period}: waiting for your approval"
    return text, [
        {"type": "section", "text": {"type": "mrkdwn", "text": (
            f"*{person_name}* submitted the timesheet for *{period}* ({stage_text}).")}},
        {"type": "section", "text": {"type": "mrkdwn", "text": summary}},
        {"type": "actions", "block_id": "decision", "elements": decision_buttons(request)},
    ]


def outcome_blocks(
    person_name: str, start_ms: int, end_ms: int, outcome: str
) -> tuple[str, list[dict[str, Any]]]:
    """`outcome` is mrkdwn already (outcome_for escapes the names and the comment in it)."""
    period = period_text(start_ms, end_ms)
    person_name = escape(person_name)
    text = f"Timesheet of {person_name} for {period}: {outcome}"
    return text, [{"type": "section", "text": {"type": "mrkdwn", "text": (
        f"Timesheet of *{person_name}* for *{period}*\n{outcome}")}}]


def reject_view(request: Request, channel: str) -> dict[str, Any]:
    return {
        "type": "modal",
        "callback_id": REJECT_CALLBACK,
        "private_metadata": json.dumps({"request": request.encode(), "channel": channel}),
        "title": {"type": "plain_text", "text": "Reject timesheet"},
        "submit": {"type": "plain_text", "text": "Reject"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [{
            "type": "input", "block_id": "reason",
            "label": {"type": "plain_text", "text": "Reason (the person sees it)"},
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
