""""Approve all (N)" on the Slack daily digest (bot.slack.approver_nudges) and the Home tab's
waiting list (bot.slack.home): one button naming exactly the N requests shown there, behind a
Block Kit `confirm` dialog that names N.

The button's value is what timebot wrote — `[[submit id, stage], …]` — read back with the
guards of bot.chat.values (anything else is a BadValue, answered ephemerally). A click decides,
as the CLICKING person with their own key, each named request that still waits for them at
that stage (re-read with the integration key first: a request decided meanwhile, moved on,
resubmitted or no longer theirs is reported, never decided by anyone else's right). Each
decision is claimed like a single button's (`slack_claims`, bot.slack.approvals): a double click
or a retry decides nothing twice. One ephemeral message lists each request's outcome. The button and
its dialog are in the reader's language (`l10n.using` around the message that shows them), the
outcome in the clicking person's."""

from __future__ import annotations

import json
from typing import Any

import structlog
from slack_bolt.async_app import AsyncAck, AsyncApp

from bot.chat.approvals import Request, period_text, status_word
from bot.chat.values import BAD_BUTTON, BadValue, action_value, ident, json_list, whole
from bot.slack.approvals import ApprovalsPart, refusal_reason
from bot.slack.deps import SlackDeps
from bot.slack.identity import SlackPerson
from bot.slack.mrkdwn import escape
from bot.slack.replies import action_channel, ephemeral, person_or_prompt
from timebot import l10n
from timebot.errors import PermissionRefused, ServiceRequestError
from timebot.l10n import _, ngettext
from timebot.l10n.loading import load_localisation

log = structlog.get_logger("timebot.slack.approve_all")

APPROVE_ALL = "timebot_approve_all"
MAX_ITEMS = 40  # 40 pairs of ~33 characters stays well within a button value's 2000

EVENT_QUERY = """query ApproveAllEvent($id: SvcId!) {
  getApprovalEventById(id: $id) { person { id name } startTime { ts } endTime { ts } }
}"""


def approve_all_value(requests: list[Request]) -> str:
    """The button's value: the requests' submit ids and stages, in the digest's order."""
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


def approve_all_button(requests: list[Request]) -> dict[str, Any]:
    """The actions block: "Approve all (N)" with a confirmation naming N."""
    count = min(len(requests), MAX_ITEMS)
    return {"type": "actions", "block_id": "approve_all", "elements": [{
        "type": "button", "action_id": APPROVE_ALL, "style": "primary",
        "text": {"type": "plain_text", "text": _("Approve all ({n})").format(n=count)},
        "value": approve_all_value(requests),
        "confirm": {
            "title": {"type": "plain_text", "text": _("Approve all?")},
            "text": {"type": "mrkdwn", "text": ngettext(
                "Approve the {n} timesheet listed here?",
                "Approve the {n} timesheets listed here?", count).format(n=count)},
            "confirm": {"type": "plain_text", "text": _("Approve {n}").format(n=count)},
            "deny": {"type": "plain_text", "text": _("Cancel")},
            "style": "primary",
        },
    }]}


class ApproveAllPart:
    def __init__(self, deps: SlackDeps, approvals: ApprovalsPart) -> None:
        self.deps = deps
        self.approvals = approvals

    async def on_click(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        user_id = str((body.get("user") or {}).get("id", ""))
        channel = action_channel(body)
        try:
            named = read_value(action_value(body))
        except BadValue as error:
            log.warning("slack_button_unreadable", user=user_id, error=str(error))
            await ephemeral(self.deps.web, channel, user_id, BAD_BUTTON)
            return
        person = await person_or_prompt(self.deps, user_id, channel)
        if person is None:
            return
        with l10n.using(await load_localisation(self.deps.runtime.client, person.apikey,
                                                person.person_id)):
            await self._approve_all(person, named, body, channel)

    async def _approve_all(self, person: SlackPerson, named: list[tuple[str, int]],
                           body: dict[str, Any], channel: str) -> None:
        user_id = person.slack_user_id
        key = await self.deps.runtime.directory.integration_key(person.organisation_id)
        lines: list[str] = []
        approved = 0
        for number, (submit_id, stage) in enumerate(named, 1):
            request, name = await self._request(key, submit_id, stage)
            if request is None:
                lines.append(f"{number}. " + _("no longer waiting for approval"))
                continue
            label = f"{escape(name)}, {period_text(request.start_ms, request.end_ms)}"
            state = await self.approvals._state(person.organisation_id, request)
            if not _waits_for(state, request, person.person_id):
                lines.append(f"{number}. {label}: "
                             f"{refusal_reason(state, request, person.person_id)}")
                continue
            why_not = await self.approvals._decide(person, request, channel, None)
            if why_not is None:
                approved += 1
                lines.append(f"{number}. {label}: " + _("approved"))
            else:
                lines.append(f"{number}. {label}: {why_not}")
        head = ngettext("You approved {approved} of the {n} timesheet:",
                        "You approved {approved} of the {n} timesheets:", len(named)).format(
            approved=approved, n=len(named))
        log.info("slack_approve_all", user=user_id, named=len(named), approved=approved)
        await ephemeral(self.deps.web, channel, user_id, "\n".join([head, *lines]))
        if (body.get("view") or {}).get("type") == "home":  # clicked in the Home tab
            await self.approvals.refresh_home(person)

    async def _request(self, key: str, submit_id: str, stage: int
                       ) -> tuple[Request | None, str]:
        try:
            data = await self.deps.runtime.client.execute(EVENT_QUERY, {"id": submit_id},
                                                          apikey=key)
        except (PermissionRefused, ServiceRequestError):  # another organisation's, or none
            return None, ""
        event = data.get("getApprovalEventById")
        if not event or not event.get("person"):
            return None, ""
        request = Request(submit_id, stage, "", str(event["person"]["id"]),
                          int(event["startTime"]["ts"]), int(event["endTime"]["ts"]))
        return request, str(event["person"].get("name") or "")


def _waits_for(state: dict[str, Any] | None, request: Request, person_id: str) -> bool:
    """Still the same submission, submitted, at that stage, and this person pending there."""
    if not state or state.get("submitId") != request.submit_id:
        return False
    if status_word(state.get("status")) != "submitted":
        return False
    if int(state.get("currentStage") or 0) != request.stage:
        return False
    return person_id in {p.get("id") for p in state.get("pendingApprovers") or []}


def register(app: AsyncApp, deps: SlackDeps, approvals: ApprovalsPart) -> ApproveAllPart:
    part = ApproveAllPart(deps, approvals)
    app.action(APPROVE_ALL)(part.on_click)
    return part
