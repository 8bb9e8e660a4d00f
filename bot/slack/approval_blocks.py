"""What approval messages show in Slack: the neutral messages of bot.chat.approvals (the
request, its outcome, the waiting list of the Home tab and the digest) as Block Kit, and the
Reject modal.

Pure functions; the approvals part (bot.slack.approvals) posts them, the Home tab and the
approver nudges reuse them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bot.chat import approvals as chat
from bot.chat.approvals import Request
from bot.chat.message import Message
from bot.slack.render import SLACK, blocks_of, button
from timebot.l10n import _
from timebot.summary import TimesheetSummary

REJECT_CALLBACK = "timebot_reject_reason"


def decision_buttons(request: Request) -> list[dict[str, Any]]:
    """Approve and Reject, both naming the request."""
    return [button(action) for action in chat.decision_actions(request)]


def summary_text(summary: TimesheetSummary) -> str:
    return chat.summary_text(summary, SLACK)


def request_blocks(
    request: Request, person_name: str, stage_text: str, summary: str
) -> tuple[str, list[dict[str, Any]]]:
    message = chat.request_message(request, person_name, stage_text, summary, SLACK)
    return message.text, blocks_of(message)


def outcome_blocks(
    person_name: str, start_ms: int, end_ms: int, outcome: str
) -> tuple[str, list[dict[str, Any]]]:
    """`outcome` is mrkdwn already (outcome_for escapes the names and the comment in it)."""
    message = chat.outcome_message(person_name, start_ms, end_ms, outcome, SLACK)
    return message.text, blocks_of(message)


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
    return blocks_of(Message("", chat.waiting_blocks(items, SLACK)))
