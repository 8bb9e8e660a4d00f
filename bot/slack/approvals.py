"""Approvals in chat.

When a timesheet reaches a stage, each pending approver who is in Slack gets a DM with the
summary and Approve / Reject buttons (sent by bot.slack.review_dms; Reject opens a modal that
requires a reason). A click is claimed first (`slack_claims`: a double click or a retry decides
once), then decided with the approver's OWN key; the service's lock decides between two
approvers at once. Every message that showed the request is updated in place into its outcome
when the service reports it (approvalEventUpdate), whatever decided it: a button, an e-mail
reply, a one-click link, the web. A person not allowed to decide gets an ephemeral reason.

The texts and blocks are in bot.slack.approval_blocks; the rules (what a message becomes, why a
person may not decide) are pure functions here; Slack and GraphQL calls sit in `ApprovalsPart`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from slack_bolt.async_app import AsyncAck, AsyncApp
from sqlalchemy import delete
from sqlalchemy.exc import IntegrityError

from bot.chat.values import BAD_BUTTON, BadValue, action_value, ident, json_of
from bot.slack.approval_blocks import (
    APPROVE,
    REJECT,
    REJECT_CALLBACK,
    Request,
    outcome_blocks,
    parse_ref,
    reject_view,
    slack_time,
    status_word,
)
from bot.slack.deps import SlackDeps
from bot.slack.identity import SlackPerson
from bot.slack.mrkdwn import escape
from bot.slack.replies import action_channel, ephemeral, person_or_prompt
from timebot import l10n
from timebot.errors import PermissionRefused, ServiceRequestError, TimebotError
from timebot.events import APPROVAL_UPDATE, ServiceEvent
from timebot.l10n import N_, _
from timebot.l10n.loading import load_localisation
from timebot.notify.reviews import round_mark
from timebot.state.db import unit_of_work
from timebot.state.models import SlackClaim, SlackOutgoing

log = structlog.get_logger("timebot.slack.approvals")

RefreshHome = Callable[[SlackPerson], Awaitable[None]]

APPROVAL_STATE = """
query State($person: SvcId!, $start: SvcTimestamp!, $end: SvcTimestamp!) {
  getApprovalState(personId: $person, startTime: $start, endTime: $end) {
    status currentStage submitId pendingApprovers { id name }
  }
}"""
APPROVE_MUTATION = "mutation Approve($id: SvcId!) { approveTimesheet(id: $id) { id status } }"
REJECT_MUTATION = """
mutation Reject($id: SvcId!, $stage: Int!, $comment: String!) {
  rejectTimesheet(id: $id, stage: $stage, comment: $comment) { id status }
}"""

def outcome_for(
    data: dict[str, Any], ref_stage: int, approver_id: str, now_ms: int
) -> str | None:
    """What a request message (of `ref_stage`, shown to `approver_id`) becomes after the event,
    or None when it still waits for that approver."""
    status = status_word(data.get("status"))
    by = escape((data.get("by") or {}).get("name") or _("someone"))
    at = slack_time(now_ms)
    action = data.get("action")
    approved_by = _("Approved by {by} at {at}").format(by=by, at=at)
    if status == "approved":
        if action == "autoApproved":
            return _("Approved automatically at {at}").format(at=at)
        return approved_by
    if status == "rejected":
        reason = escape((data.get("comment") or "").strip())
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


def refusal_reason(state: dict[str, Any] | None, request: Request, person_id: str) -> str:
    """Why this person may not decide this request now (shown only to them)."""
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
        names = ", ".join(escape(p.get("name")) for p in pending) or _("nobody")
        return _("You are not an approver of this stage: it waits for {names}.").format(
            names=names)
    return _(SERVICE_REFUSED)


class ApprovalsPart:
    def __init__(self, deps: SlackDeps, refresh_home: RefreshHome) -> None:
        self.deps = deps
        self.refresh_home = refresh_home

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
            stored.context = {**stored.context, "outcome": outcome}
        await self.deps.sender.update_row(row.id, text, blocks)

    # --- clicks ---------------------------------------------------------------------------

    async def _claim(self, key: str, user_id: str) -> bool:
        try:
            async with unit_of_work(self.deps.runtime.state_sessions) as session:
                session.add(SlackClaim(key=key, slack_user_id=user_id,
                                       created_ms=self.deps.runtime.clock.now_ms()))
        except IntegrityError:
            return False
        return True

    async def _release(self, key: str) -> None:
        async with unit_of_work(self.deps.runtime.state_sessions) as session:
            await session.execute(delete(SlackClaim).where(SlackClaim.key == key))

    async def _state(self, organisation_id: str, request: Request) -> dict[str, Any] | None:
        key = await self.deps.runtime.directory.integration_key(organisation_id)
        try:
            data = await self.deps.runtime.client.execute(
                APPROVAL_STATE,
                {"person": request.person_id, "start": request.start_ms, "end": request.end_ms},
                apikey=key,
            )
        except (PermissionRefused, ServiceRequestError):  # a person this org does not have
            return None
        state: dict[str, Any] | None = data.get("getApprovalState")
        return state

    async def _decide(
        self, person: SlackPerson, request: Request, channel: str, comment: str | None
    ) -> str | None:
        """Claim, then decide as the person; None when done, else why not."""
        verb = "approve" if comment is None else "reject"
        claim = f"{verb}:{request.submit_id}:{request.stage}:{person.person_id}"
        if not await self._claim(claim, person.slack_user_id):
            return _("Your decision on this timesheet was already recorded.")
        try:
            if comment is None:
                await self.deps.runtime.client.execute(
                    APPROVE_MUTATION, {"id": request.submit_id}, apikey=person.apikey)
            else:
                await self.deps.runtime.client.execute(
                    REJECT_MUTATION,
                    {"id": request.submit_id, "stage": request.stage, "comment": comment},
                    apikey=person.apikey)
        except (PermissionRefused, ServiceRequestError) as error:
            await self._release(claim)
            state = await self._state(person.organisation_id, request)
            reason = refusal_reason(state, request, person.person_id)
            if reason == _(SERVICE_REFUSED) and isinstance(
                    error, ServiceRequestError):
                reason = escape("; ".join(error.messages))
            return reason
        except TimebotError:
            await self._release(claim)
            raise
        return None

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

    async def on_approve(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        user_id = str((body.get("user") or {}).get("id", ""))
        channel = action_channel(body)
        request = await self._request(body, user_id, channel)
        if request is None:
            return
        person = await person_or_prompt(self.deps, user_id, channel)
        if person is None:
            return
        why_not = await self._decide(person, request, channel, None)
        if why_not is not None:
            await ephemeral(self.deps.web, channel, user_id, why_not)
        if (body.get("view") or {}).get("type") == "home":  # clicked in the Home tab
            await self.refresh_home(person)

    async def on_reject(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        user_id = str((body.get("user") or {}).get("id", ""))
        channel = action_channel(body)
        request = await self._request(body, user_id, channel)
        if request is None:
            return
        person = await person_or_prompt(self.deps, user_id, channel)
        if person is None:
            return
        state = await self._state(person.organisation_id, request)
        if not self._may_try(state, request, person.person_id):
            await ephemeral(
                self.deps.web, channel, user_id, refusal_reason(state, request, person.person_id))
            return
        await self.deps.web.views_open(
            trigger_id=str(body.get("trigger_id", "")),
            view=reject_view(request, channel),
        )

    @staticmethod
    def _may_try(state: dict[str, Any] | None, request: Request, person_id: str) -> bool:
        """Admins and last-stage approvers may also reject later: the service decides those;
        the plain refusals are answered here without a modal."""
        if not state or state.get("submitId") != request.submit_id:
            return False
        return status_word(state.get("status")) in ("approved", "submitted")

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
    app.action(APPROVE)(part.on_approve)
    app.action(REJECT)(part.on_reject)
    app.view(REJECT_CALLBACK)(part.on_reject_submit)
    deps.hub.subscribe("slack-approvals", part.on_event)
    return part
