""""Approve all (N)" on the Slack daily digest (bot.slack.approver_nudges) and the Home tab's
waiting list (bot.slack.home): one button naming exactly the N requests shown there, behind a
Block Kit `confirm` dialog that names N.

What the button names, how its value is read back, which named requests still wait for the
clicking person and the answer are bot.chat.approve_all; a click decides, as the CLICKING
person with their own key, each one that still waits (re-read with the integration key first),
each claimed like a single button's (bot.chat.deciding, through bot.slack.approvals): a double
click or a retry decides nothing twice. One ephemeral message lists each request's outcome.
The button and its dialog are in the reader's language (`l10n.using` around the message
that shows them), the outcome in the clicking person's."""

from __future__ import annotations

from typing import Any

import structlog
from slack_bolt.async_app import AsyncAck, AsyncApp

from bot.chat.approvals import Request, period_text
from bot.chat.approve_all import (
    APPROVE_ALL,
    approve_all_block,
    read_value,
    result_text,
    waits_for,
)
from bot.chat.values import BAD_BUTTON, BadValue, action_value
from bot.slack.approvals import ApprovalsPart, refusal_reason
from bot.slack.deps import SlackDeps
from bot.slack.identity import SlackPerson
from bot.slack.mrkdwn import escape
from bot.slack.render import actions_block
from bot.slack.replies import action_channel, ephemeral, person_or_prompt
from timebot import l10n
from timebot.errors import PermissionRefused, ServiceRequestError
from timebot.l10n import _
from timebot.l10n.loading import load_localisation

log = structlog.get_logger("timebot.slack.approve_all")

EVENT_QUERY = """query ApproveAllEvent($id: SvcId!) {
  getApprovalEventById(id: $id) { person { id name } startTime { ts } endTime { ts } }
}"""


def approve_all_button(requests: list[Request]) -> dict[str, Any]:
    """The actions block: "Approve all (N)" with a confirmation naming N."""
    return actions_block(approve_all_block(requests))


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
            if not waits_for(state, request, person.person_id):
                lines.append(f"{number}. {label}: "
                             f"{refusal_reason(state, request, person.person_id)}")
                continue
            why_not = await self.approvals._decide(person, request, channel, None)
            if why_not is None:
                approved += 1
                lines.append(f"{number}. {label}: " + _("approved"))
            else:
                lines.append(f"{number}. {label}: {why_not}")
        log.info("slack_approve_all", user=user_id, named=len(named), approved=approved)
        await ephemeral(self.deps.web, channel, user_id, result_text(approved, lines))
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


def register(app: AsyncApp, deps: SlackDeps, approvals: ApprovalsPart) -> ApproveAllPart:
    part = ApproveAllPart(deps, approvals)
    app.action(APPROVE_ALL)(part.on_click)
    return part
