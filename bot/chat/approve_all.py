""""Approve all (N)": one action naming exactly the N requests an approver was shown (the
daily digest, the Home view), behind a confirmation that names N.

The action's value is what timebot wrote — `[[submit id, stage], …]`, at most `MAX_ITEMS` —
read back with bot.chat.values' guards (`read_value`: anything else is a BadValue). A click
decides, as the CLICKING person with their own key, each named request that still waits for
them at that stage (`waits_for`, on the state re-read with the integration key: a request
decided meanwhile, moved on, resubmitted or no longer theirs is reported with
`approvals.refusal_reason`, never decided by anyone else's right), each claimed like a single
click (bot.chat.deciding); the answer lists each request's outcome (`result_text`).
"""

from __future__ import annotations

import json
from typing import Any

from bot.chat.approvals import Request, status_word
from bot.chat.message import Action, Block, Confirm
from bot.chat.values import BadValue, ident, json_list, whole
from timebot.l10n import _, ngettext

APPROVE_ALL = "timebot_approve_all"
GROUP = "approve_all"
MAX_ITEMS = 40  # 40 pairs of ~33 characters stays well within a button value's 2000


def approve_all_value(requests: list[Request]) -> str:
    """The action's value: the requests' submit ids and stages, in the order shown."""
    return json.dumps([[r.submit_id, r.stage] for r in requests[:MAX_ITEMS]],
                      separators=(",", ":"))


def read_value(value: str) -> list[tuple[str, int]]:
    """The (submit id, stage) pairs a value names, or BadValue."""
    pairs = json_list(value, tuple(range(1, MAX_ITEMS + 1)))
    found: list[tuple[str, int]] = []
    for pair in pairs:
        if not isinstance(pair, list) or len(pair) != 2:
            raise BadValue("not a pair")
        found.append((ident(pair[0]), whole(pair[1])))
    if len(set(found)) != len(found):
        raise BadValue("a request named twice")
    return found


def approve_all_block(requests: list[Request]) -> Block:
    """"Approve all (N)" with a confirmation naming N (in the language in force)."""
    count = min(len(requests), MAX_ITEMS)
    confirm = Confirm(
        _("Approve all?"),
        ngettext("Approve the {n} timesheet listed here?",
                 "Approve the {n} timesheets listed here?", count).format(n=count),
        _("Approve {n}").format(n=count), _("Cancel"), "primary")
    return Block(actions=(Action(APPROVE_ALL, _("Approve all ({n})").format(n=count),
                                 approve_all_value(requests), "primary", confirm),), group=GROUP)


def waits_for(state: dict[str, Any] | None, request: Request, person_id: str) -> bool:
    """Still the same submission, submitted, at that stage, and this person pending there."""
    if not state or state.get("submitId") != request.submit_id:
        return False
    if status_word(state.get("status")) != "submitted":
        return False
    if int(state.get("currentStage") or 0) != request.stage:
        return False
    return person_id in {p.get("id") for p in state.get("pendingApprovers") or []}


def result_text(approved: int, lines: list[str]) -> str:
    """The answer: how many of the named were approved, then each one's line."""
    head = ngettext("You approved {approved} of the {n} timesheet:",
                    "You approved {approved} of the {n} timesheets:", len(lines)).format(
        approved=approved, n=len(lines))
    return "\n".join([head, *lines])
