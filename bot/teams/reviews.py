"""Review requests as Teams cards: the Teams channel of the ground's review dispatch
(`timebot.notify.review_dispatch`, which decides who is asked), and the cards settled in
place when the service reports the decision (approvalEventUpdate), whatever decided it.

An approver linked in Teams (bot.teams.tenants: they wrote to the bot, in the tenant serving
their organisation; or one who never did, the app installed for them through Microsoft Graph:
bot.teams.installs) gets the review card (bot.teams.cards), queued under a key derived from
the request's dedupe key, so it goes out once whichever delivery brought the event. The row's
ref and context are what the settling and the card's actions (bot.teams.actions) read. Push
off in the approver's notification settings (or approval updates off): no card. Whether the
approver is away is asked of Microsoft Graph meanwhile (bot.teams.away_status).
"""

from __future__ import annotations

from typing import Any

import structlog

from bot.chat.approvals import (
    Request,
    outcome_for,
    outcome_message,
    parse_ref,
    ref_of,
    request_message,
    request_of,
    summary_text,
)
from bot.chat.message import Block, Message
from bot.chat.reach import reach
from bot.teams import cards, render
from bot.teams.away_status import TeamsAwayStatus
from bot.teams.installs import TeamsInstaller
from bot.teams.outgoing import Recipient, TeamsOutbox
from bot.teams.render import TEAMS
from bot.teams.tenants import TeamsTenants
from timebot import l10n
from timebot.events.bus import APPROVAL_UPDATE, ServiceEvent
from timebot.l10n import _
from timebot.l10n.loading import load_localisation
from timebot.notify.decisions import ReviewRequest
from timebot.notify.reviews import round_mark
from timebot.process.runtime import Runtime
from timebot.stages import stage_label
from timebot.state.teams_models import TeamsOutgoing
from timebot.summary import TimesheetSummary

log = structlog.get_logger("timebot.teams.reviews")


def card_key(dedupe_key: str) -> str:
    """The Teams sender's key of the card asking a review request."""
    return f"teams-review:{dedupe_key}"


def context_of(request: Request, organisation_id: str, person_name: str,
               approver_id: str) -> dict[str, Any]:
    """What a request card's row remembers: enough to show its outcome later."""
    return {"timesheetId": request.timesheet_id, "personId": request.person_id,
            "submitId": request.submit_id, "organisationId": organisation_id,
            "startTime": request.start_ms, "endTime": request.end_ms,
            "personName": person_name, "approverId": approver_id}


def request_card(request: Request, person_name: str, stage_text: str,
                 summary: TimesheetSummary, teams_user_id: str,
                 reason: str | None = None) -> tuple[Message, dict[str, Any]]:
    """The neutral review request (bot.chat.approvals) as a card refreshing for its approver;
    `reason`: why they are asked too (another approver is away)."""
    shown = request_message(request, person_name, stage_text, summary_text(summary, TEAMS),
                            TEAMS)
    if reason is not None:
        shown = Message(f"{TEAMS.escape(reason)}: {shown.text}", (Block(_(
            "{reason}: you are asked too.").format(reason=TEAMS.escape(reason))),
            *shown.blocks), shown.facts)
    return shown, render.card_of(shown, render.refresh_block(request.encode(),
                                                              [teams_user_id]))


def outcome_activity(row: TeamsOutgoing, outcome: str) -> dict[str, Any]:
    """The activity a request card's row becomes: the neutral outcome message."""
    context = row.context
    shown = outcome_message(str(context.get("personName", "")),
                            int(context.get("startTime", 0)), int(context.get("endTime", 0)),
                            outcome, TEAMS)
    return cards.message(render.card_of(shown), render.preview(shown))


def card_of(row: TeamsOutgoing) -> dict[str, Any] | None:
    """The card a row shows now (its activity's, updated in place with the outcome)."""
    for attachment in row.activity.get("attachments") or []:
        if attachment.get("contentType") == cards.CARD_TYPE:
            content = attachment.get("content")
            return content if isinstance(content, dict) else None
    return None


class TeamsReviews:
    """The Teams review channel (`timebot.notify.decisions.ReviewChannel`) and the settling
    of its cards."""

    handles = (APPROVAL_UPDATE,)  # the events on_event reads

    def __init__(self, runtime: Runtime, tenants: TeamsTenants, outbox: TeamsOutbox,
                 away: TeamsAwayStatus | None = None,
                 installer: TeamsInstaller | None = None) -> None:
        self.runtime, self.tenants, self.outbox, self.away = runtime, tenants, outbox, away
        self.installer = installer  # reaches who never wrote (bot.teams.installs)

    async def already_sent(self, dedupe_key: str) -> bool:
        return await self.outbox.queued_with_key(card_key(dedupe_key)) is not None

    async def review_request(self, request: ReviewRequest) -> bool:
        """Queue the card; False when queued before, the approver is not in Teams (or their
        tenant does not serve the organisation), or they turned push off."""
        user = await self.tenants.user_of_person(request.organisation_id, request.approver_id)
        if user is None and self.installer is not None:  # never wrote: installed, then sent
            self.installer.later(request.organisation_id, request.approver_id,
                                 lambda: self.review_request(request))
        if user is None or not user.conversation_id or not user.service_url:
            return False
        reader = await reach(self.runtime, request.organisation_id, request.approver_id)
        if self.away is not None:  # in the background: the card does not wait for Graph
            self.away.watch(user, reader.time_zone if reader is not None else None)
        if reader is None:
            return False
        summary = request.summary
        shown = request_of(request, request.timesheet_id)
        with l10n.using(reader):
            label = (stage_label(request.stage, request.stage_count)
                     if request.stage_count > 1 else _("approval"))
            reason = request.reason.text() if request.reason is not None else None
            said, card = request_card(shown, summary.person_name, label, summary,
                                      user.teams_user_id, reason)
        return await self.outbox.send(
            Recipient(user.tenant_id, user.organisation_id, user.conversation_id,
                      user.service_url),
            cards.message(card, render.preview(said)), key=card_key(request.dedupe_key),
            ref=ref_of(request.submit_id, request.stage, request.approver_id),
            context=context_of(shown, request.organisation_id, summary.person_name,
                               request.approver_id),
            bulk=True)

    # --- the service's decisions ---------------------------------------------------------

    async def on_event(self, event: ServiceEvent) -> None:
        if event.event == APPROVAL_UPDATE and event.data.get("submitId"):
            await self.settle(event)

    async def settle(self, event: ServiceEvent) -> None:
        """Update in place every card that the event decided, for each approver it was sent
        to (a restart ends the cards of earlier rounds, not its own)."""
        data = event.data
        own_round = round_mark(event)
        now = self.runtime.clock.now_ms()
        for row in await self.outbox.with_ref(f"approval:{data['submitId']}:"):
            parsed = parse_ref(row.ref) if row.ref else None
            if parsed is None or row.context.get("outcome"):
                continue
            if row.organisation_id != event.organisation_id:
                continue  # another organisation's card never changes on this event
            if own_round and (row.dedupe_key or "").endswith(own_round):
                continue
            key = await self.runtime.directory.integration_key(row.organisation_id)
            with l10n.using(await load_localisation(self.runtime.client, key, parsed[2])):
                outcome = outcome_for(data, parsed[1], parsed[2], now, TEAMS)
                if outcome is None:
                    continue
                activity = outcome_activity(row, outcome)
            await self.outbox.update_row(row.id, activity, context={"outcome": outcome})
