"""Approvals in chat.

When a timesheet reaches a stage, each pending approver who is in Slack gets a DM with the
summary and Approve / Reject buttons (sent by bot.slack.review_dms; Reject opens a modal that
requires a reason). A click is claimed first (`slack_claims`: a double click or a retry decides
once), then decided with the approver's OWN key; the service's lock decides between two
approvers at once. Every message that showed the request is updated in place into its outcome
when the service reports it (approvalEventUpdate), whatever decided it: a button, an e-mail
reply, a one-click link, the web. A person not allowed to decide gets an ephemeral reason.

The messages and the rules (what a message becomes, why a person may not decide) are the
neutral ones of bot.chat.approvals, with Slack's markup; deciding once is bot.chat.deciding;
their Block Kit is bot.slack.approval_blocks; Slack calls sit in `ApprovalsPart`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from slack_bolt.async_app import AsyncAck, AsyncApp

from bot.chat import approvals as chat
from bot.chat.approvals import APPROVE, REJECT, Request, parse_ref
from bot.chat.deciding import Claims, approval_state, decide
from bot.chat.values import BAD_BUTTON, BadValue, action_value, first_action, ident, json_of
from bot.slack.approval_blocks import REJECT_CALLBACK, outcome_blocks, reject_view
from bot.slack.deps import SlackDeps
from bot.slack.identity import SlackPerson
from bot.slack.render import SLACK
from bot.slack.replies import action_channel, ephemeral, person_or_prompt
from timebot import l10n
from timebot.events.bus import APPROVAL_UPDATE, ServiceEvent
from timebot.l10n.loading import load_localisation
from timebot.notify.reviews import round_mark
from timebot.state.db import unit_of_work
from timebot.state.models import SlackOutgoing

log = structlog.get_logger("timebot.slack.approvals")

RefreshHome = Callable[[SlackPerson], Awaitable[None]]


def outcome_for(
    data: dict[str, Any], ref_stage: int, approver_id: str, now_ms: int
) -> str | None:
    """What a request message (of `ref_stage`, shown to `approver_id`) becomes after the event,
    or None when it still waits for that approver (mrkdwn)."""
    return chat.outcome_for(data, ref_stage, approver_id, now_ms, SLACK)


def refusal_reason(state: dict[str, Any] | None, request: Request, person_id: str) -> str:
    """Why this person may not decide this request now (shown only to them)."""
    return chat.refusal_reason(state, request, person_id, SLACK)


class ApprovalsPart:
    handles = (APPROVAL_UPDATE,)  # the events on_event reads

    def __init__(self, deps: SlackDeps, refresh_home: RefreshHome) -> None:
        self.deps = deps
        self.refresh_home = refresh_home
        self.claims = Claims(deps.runtime)

    # --- events from the service ---------------------------------------------------------

    async def on_event(self, event: ServiceEvent) -> None:
        if event.event == APPROVAL_UPDATE and event.data.get("submitId"):
            await self._settle(event)

    async def _settle(self, event: ServiceEvent) -> None:
        """Update in place every request message that the event decided. A restart ends the
        messages of earlier rounds, not those asking for its own (bot.slack.review_dms may have
        queued them before this runs, or this runs again when the event is retried)."""
        data = event.data
        submit_id = str(data["submitId"])
        own_round = round_mark(event)
        now = self.deps.runtime.clock.now_ms()
        for row in await self.deps.sender.sent_with_ref(f"approval:{submit_id}:"):
            if row.context.get("outcome") or row.ref is None:
                continue
            if own_round and (row.dedupe_key or "").endswith(own_round):
                continue
            parsed = parse_ref(row.ref)
            if parsed is None:
                continue
            with l10n.using(await self._localisation(event.organisation_id, parsed[2])):
                outcome = outcome_for(data, parsed[1], parsed[2], now)
                if outcome is not None:
                    await self._show_outcome(row, outcome)

    async def _localisation(self, organisation_id: str, approver_id: str) -> l10n.Localisation:
        """The language and formats of the approver a request message was sent to."""
        key = await self.deps.runtime.directory.integration_key(organisation_id)
        return await load_localisation(self.deps.runtime.client, key, approver_id)

    async def _show_outcome(self, row: SlackOutgoing, outcome: str) -> None:
        context = row.context
        text, blocks = outcome_blocks(
            str(context.get("personName", "")), int(context.get("startTime", 0)),
            int(context.get("endTime", 0)), outcome,
        )
        async with unit_of_work(self.deps.sender.sessions) as session:
            stored = await session.get(SlackOutgoing, row.id)
            if stored is None or stored.context.get("outcome"):
                return
            stored.add_context({"outcome": outcome}, self.deps.runtime.clock.now_ms())
        await self.deps.sender.update_row(row.id, text, blocks)

    # --- clicks ---------------------------------------------------------------------------

    async def _state(self, organisation_id: str, request: Request) -> dict[str, Any] | None:
        return await approval_state(self.deps.runtime, organisation_id, request)

    async def _decide(
        self, person: SlackPerson, request: Request, channel: str, comment: str | None
    ) -> str | None:
        """Claim, then decide as the person; None when done, else why not."""
        return await decide(self.deps.runtime, self.claims, person, request, comment,
                            who=person.slack_user_id, markup=SLACK)

    async def _request(self, body: dict[str, Any], user_id: str, channel: str
                       ) -> Request | None:
        """The request the clicked button names, or None after telling the user it is not
        one timebot can read."""
        try:
            return Request.decode(action_value(body))
        except BadValue as error:
            log.warning("slack_button_unreadable", user=user_id, error=str(error))
            await ephemeral(self.deps.web, channel, user_id, BAD_BUTTON)
            return None

    async def on_click(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        """Approve or Reject clicked (the decision is the button's action id): Approve decides
        at once; Reject opens the modal that asks the reason, when the person may decide."""
        await ack()
        decision = first_action(body).get("action_id")
        user_id = str((body.get("user") or {}).get("id", ""))
        channel = action_channel(body)
        request = await self._request(body, user_id, channel)
        if request is None:
            return
        person = await person_or_prompt(self.deps, user_id, channel)
        if person is None:
            return
        if decision == REJECT:
            state = await self._state(person.organisation_id, request)
            if not chat.may_try(state, request):
                await ephemeral(self.deps.web, channel, user_id,
                                refusal_reason(state, request, person.person_id))
                return
            await self.deps.web.views_open(
                trigger_id=str(body.get("trigger_id", "")),
                view=reject_view(request, channel),
            )
            return
        why_not = await self._decide(person, request, channel, None)
        if why_not is not None:
            await ephemeral(self.deps.web, channel, user_id, why_not)
        if (body.get("view") or {}).get("type") == "home":  # clicked in the Home tab
            await self.refresh_home(person)

    async def on_reject_submit(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        view = body.get("view") or {}
        values = (view.get("state") or {}).get("values") or {}
        reason = str(((values.get("reason") or {}).get("value") or {}).get("value") or "").strip()
        if not reason:
            await ack(response_action="errors", errors={"reason": "A reason is required."})
            return
        user_id = str((body.get("user") or {}).get("id", ""))
        try:
            meta = json_of(str(view.get("private_metadata") or ""))
            if not isinstance(meta, dict):
                raise BadValue("not an object")
            request = Request.decode(str(meta.get("request") or ""))
            channel = ident(meta.get("channel") or user_id)
        except BadValue as error:
            log.warning("slack_view_unreadable", user=user_id, error=str(error))
            await ack(response_action="errors", errors={"reason": BAD_BUTTON[:150]})
            return
        try:
            person = await self.deps.identity.resolve(user_id)
        except Exception as error:  # NotIdentified, or Slack/service unreachable
            await ack(response_action="errors", errors={"reason": str(error)[:150]})
            return
        why_not = await self._decide(person, request, channel, reason)
        if why_not is not None:
            await ack(response_action="errors", errors={"reason": why_not[:150]})
            return
        await ack()


def register(app: AsyncApp, deps: SlackDeps, *, refresh_home: RefreshHome) -> ApprovalsPart:
    """The buttons' and the Reject modal's listeners, and the subscriber to the service's
    approval events (which settles the request messages); `refresh_home` republishes a
    person's Home tab after a click there."""
    part = ApprovalsPart(deps, refresh_home)
    for decision in (APPROVE, REJECT):
        app.action(decision)(part.on_click)
    app.view(REJECT_CALLBACK)(part.on_reject_submit)
    deps.hub.subscribe("slack-approvals", part.on_event, part.handles)
    return part
