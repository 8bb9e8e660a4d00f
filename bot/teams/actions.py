"""The `adaptiveCard/action` invoke (Universal Actions' Action.Execute): Approve, Reject (with
the reason typed into the card), "Approve all (N)", "Submit now", the nudge controls
(bot.teams.nudge_controls), and the refresh Teams asks for when an
approver sees a card. Answered in the HTTP response: the card that replaces the clicked one.

Who decides is the user the verified activity names (its `from.aadObjectId`, in a tenant
serving an organisation: bot.teams.identity), never anyone the card's data names: the
decision is made with THAT person's own key, by the neutral core (bot.chat.deciding: claimed
first, so a double click or Teams' retry decides once). A stale card (decided meanwhile, by
anyone, anywhere) decides nothing and is answered with the current outcome; the service's lock
decides between two approvers at once."""

from __future__ import annotations

from typing import Any

import structlog
from microsoft_agents.activity import Activity

from bot.chat.approvals import (
    APPROVE,
    REJECT,
    Request,
    outcome_for,
    period_text,
    ref_of,
    refusal_reason,
)
from bot.chat.approve_all import APPROVE_ALL, read_value, result_text, waits_for
from bot.chat.deciding import Claims, approval_state, decide
from bot.chat.message import Block, Message
from bot.chat.nudges import CONTROLS, SUBMIT_NOW, submit_value
from bot.chat.person import ChatPerson
from bot.chat.values import BadValue
from bot.teams import cards, render
from bot.teams.activities import tenant_of
from bot.teams.endpoint import InvokeAnswer
from bot.teams.identity import NotIdentified, Sender, TeamsIdentity
from bot.teams.nudge_controls import NudgeControls
from bot.teams.outgoing import TeamsOutbox
from bot.teams.render import TEAMS
from bot.teams.reviews import card_of, outcome_activity
from bot.teams.tenants import TeamsTenants
from timebot import l10n
from timebot.errors import PermissionRefused, ServiceRequestError
from timebot.l10n import _
from timebot.l10n.loading import load_localisation
from timebot.process.runtime import Runtime
from timebot.state.teams_models import TeamsOutgoing

log = structlog.get_logger("timebot.teams.actions")

EVENT_QUERY = """query ApproveAllEvent($id: SvcId!) {
  getApprovalEventById(id: $id) { person { id } startTime { ts } endTime { ts } }
}"""
SUBMIT = """
mutation Submit($person: SvcId!, $start: SvcTimestamp!, $end: SvcTimestamp!) {
  submitTimesheet(personId: $person, startTime: $start, endTime: $end) { id status }
}"""
NOT_CONNECTED = "Your organisation has not connected this Microsoft 365 tenant."
BAD_CARD = "This card is not one timebot can read (an old or altered message)."


class CardActions:
    def __init__(self, runtime: Runtime, tenants: TeamsTenants, identity: TeamsIdentity,
                 outbox: TeamsOutbox) -> None:
        self.runtime, self.tenants, self.identity, self.outbox = (
            runtime, tenants, identity, outbox)
        self.claims = Claims(runtime)
        self.controls = NudgeControls(runtime, outbox, TEAMS)

    async def __call__(self, activity: Activity, _claims: dict[str, Any]) -> InvokeAnswer:
        value = activity.value if isinstance(activity.value, dict) else {}
        action = value.get("action")
        action = action if isinstance(action, dict) else {}
        verb, data = str(action.get("verb") or ""), action.get("data")
        person = await self._person(activity)
        if isinstance(person, InvokeAnswer):
            return person
        conversation = str(activity.conversation.id) if activity.conversation else ""
        with l10n.using(await load_localisation(self.runtime.client, person.apikey,
                                                person.person_id)):
            try:
                if verb == APPROVE_ALL:
                    return await self._approve_all(
                        person, read_value(render.value_of(data)), conversation)
                if verb == SUBMIT_NOW:
                    return await self._submit_now(person, render.value_of(data),
                                                  conversation)
                if verb in CONTROLS:  # Snooze 1 hour, Until tomorrow, Turn nudges off
                    return await self.controls.answer(person, verb, data, conversation,
                                                      activity.id)
                request = Request.decode(render.value_of(data))
            except (cards.BadCard, BadValue) as error:
                log.warning("teams_card_unreadable", verb=verb[:40], error=str(error))
                return InvokeAnswer(200, cards.error_response(400, BAD_CARD))
            row = await self.outbox.latest_with_ref(
                ref_of(request.submit_id, request.stage, person.person_id), conversation)
            if verb == cards.REFRESH or (row is not None and row.context.get("outcome")):
                return await self._current(person, request, row)  # a stale card: as it is
            if verb == APPROVE:
                return (await self._decide(person, request, row, None))[1]
            if verb == REJECT:
                reason = cards.reason_of(data)
                if not reason:
                    return InvokeAnswer(200, cards.text_response(_(
                        "A rejection needs a reason: the timesheet was not rejected.")))
                return (await self._decide(person, request, row, reason))[1]
        return InvokeAnswer(200, cards.error_response(400, BAD_CARD))

    async def _person(self, activity: Activity) -> ChatPerson | InvokeAnswer:
        """The person the verified activity names, or the answer refusing the action."""
        tenant = await self.tenants.tenant(tenant_of(activity))
        if tenant is None or not tenant.active:
            return InvokeAnswer(200, cards.error_response(403, NOT_CONNECTED))
        sender, conversation = activity.from_property, activity.conversation
        if sender is None or conversation is None:
            return InvokeAnswer(200, cards.error_response(400, BAD_CARD))
        try:
            return await self.identity.resolve(tenant, Sender(
                tenant.tenant_id, str(sender.aad_object_id or ""), str(sender.id),
                str(conversation.id), str(activity.service_url or ""),
                activity.local_timezone))
        except NotIdentified as refusal:
            return InvokeAnswer(200, cards.error_response(401, refusal.message))

    async def _current(self, person: ChatPerson, request: Request,
                       row: TeamsOutgoing | None) -> InvokeAnswer:
        """The card as it is now: the row's (its outcome once settled), else what the
        service's state says."""
        shown = card_of(row) if row is not None else None
        if shown is not None:
            return InvokeAnswer(200, cards.card_response(shown))
        state = await approval_state(self.runtime, person.organisation_id, request)
        return InvokeAnswer(200, cards.card_response(self._outcome_card(
            row, refusal_reason(state, request, person.person_id, TEAMS))))

    @staticmethod
    def _outcome_card(row: TeamsOutgoing | None, outcome: str) -> dict[str, Any]:
        if row is not None:
            content: dict[str, Any] = outcome_activity(row, outcome)["attachments"][0][
                "content"]
            return content
        return render.card_of(cards.notice_message([outcome], TEAMS))

    async def _decide(self, person: ChatPerson, request: Request,
                      row: TeamsOutgoing | None, reason: str | None
                      ) -> tuple[str | None, InvokeAnswer]:
        """Decide as the person, once: (None when decided, else why not; the answer with the
        card that shows what became of it)."""
        why_not = await decide(self.runtime, self.claims, person, request, reason,
                               who=person.person_id, markup=TEAMS)
        if why_not is not None:
            if row is not None and why_not == _(
                    "Your decision on this timesheet was already recorded."):
                return why_not, await self._current(person, request, row)
            return why_not, InvokeAnswer(200, cards.card_response(
                self._outcome_card(row, why_not)))
        # what the service's event will say, shown to the clicker now (the neutral rule)
        said = ({"status": "s", "action": "approved", "stage": request.stage + 1}
                if reason is None else {"status": "r", "comment": reason})
        outcome = outcome_for({**said, "by": {"name": person.name}}, request.stage,
                              person.person_id, self.runtime.clock.now_ms(), TEAMS)
        assert outcome is not None
        card = self._outcome_card(row, outcome)
        if row is not None:  # its reader sees it now: the event's settling leaves it be
            await self.outbox.record_shown(row.id, cards.message(card), {"outcome": outcome})
        log.info("teams_decided", reject=reason is not None, submit=request.submit_id,
                 stage=request.stage)
        return None, InvokeAnswer(200, cards.card_response(card))

    async def _approve_all(self, person: ChatPerson, named: list[tuple[str, int]],
                           conversation: str) -> InvokeAnswer:
        """Each named request still waiting for this person at that stage, approved as them
        (claimed one by one, bot.chat.approve_all's rules); one card lists each outcome."""
        lines: list[str] = []
        approved = 0
        for number, (submit_id, stage) in enumerate(named, 1):
            request = await self._request_of(person, submit_id, stage)
            if request is None:
                lines.append(f"{number}. " + _("no longer waiting for approval"))
                continue
            state = await approval_state(self.runtime, person.organisation_id, request)
            if not waits_for(state, request, person.person_id):
                lines.append(f"{number}. "
                             f"{refusal_reason(state, request, person.person_id, TEAMS)}")
                continue
            row = await self.outbox.latest_with_ref(
                ref_of(submit_id, stage, person.person_id), conversation)
            refused, _answer = await self._decide(person, request, row, None)
            if refused is None:
                approved += 1
                lines.append(f"{number}. " + _("approved"))
            else:
                lines.append(f"{number}. {refused}")
        log.info("teams_approve_all", named=len(named), approved=approved)
        said = result_text(approved, lines)
        return InvokeAnswer(200, cards.card_response(render.card_of(
            Message(said, tuple(Block(line) for line in said.splitlines())))))

    async def _submit_now(self, person: ChatPerson, value: str, conversation: str
                          ) -> InvokeAnswer:
        """"Submit now" on a reminder: the period submitted as the person; the reminder's
        card says so."""
        start, end, key = submit_value(value)
        try:
            await self.runtime.client.execute(SUBMIT, {
                "person": person.person_id, "start": start, "end": end}, apikey=person.apikey)
        except (PermissionRefused, ServiceRequestError) as error:
            return InvokeAnswer(200, cards.text_response(_("Not submitted: {why}").format(
                why=error)))
        said = _("Submitted your timesheet for {period}.").format(
            period=period_text(start, end))
        card = render.card_of(cards.notice_message([said], TEAMS))
        row = await self.outbox.queued_with_key(key) if key else None
        if row is not None and row.conversation_id == conversation:
            await self.outbox.record_shown(row.id, cards.message(card), {"submitted": True})
        log.info("teams_submitted", start=start, end=end)
        return InvokeAnswer(200, cards.card_response(card))

    async def _request_of(self, person: ChatPerson, submit_id: str, stage: int
                          ) -> Request | None:
        key = await self.runtime.directory.integration_key(person.organisation_id)
        try:
            data = await self.runtime.client.execute(EVENT_QUERY, {"id": submit_id},
                                                     apikey=key)
        except (PermissionRefused, ServiceRequestError):  # another organisation's, or none
            return None
        event = data.get("getApprovalEventById")
        if not event or not event.get("person"):
            return None
        return Request(submit_id, stage, "", str(event["person"]["id"]),
                       int(event["startTime"]["ts"]), int(event["endTime"]["ts"]))
