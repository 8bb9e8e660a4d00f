"""The `adaptiveCard/action` invoke (Universal Actions' Action.Execute): Approve, Reject (with
the reason typed into the card), "Approve all (N)", and the refresh Teams asks for when an
approver sees a card. Answered in the HTTP response: the card that replaces the clicked one.

Who decides is the user the verified activity names (its `from.aadObjectId`, in a tenant
serving an organisation: bot.teams.identity), never anyone the card's data names: the
decision is made with THAT person's own key. Each decision is claimed first (`teams_claims`):
a double click or Teams' retry decides once and is answered with the card as it is now. A
stale card (decided meanwhile, by anyone, anywhere) decides nothing and is answered with the
current outcome; the service's lock decides between two approvers at once."""

from __future__ import annotations

from typing import Any

import structlog
from microsoft_agents.activity import Activity

from bot.teams import cards
from bot.teams.activities import tenant_of
from bot.teams.endpoint import InvokeAnswer
from bot.teams.identity import NotIdentified, Sender, TeamsIdentity, TeamsPerson
from bot.teams.outgoing import TeamsOutbox
from bot.teams.reviews import card_of, outcome_activity, ref_of
from bot.teams.tenants import TeamsTenants
from timebot import l10n
from timebot.errors import PermissionRefused, ServiceRequestError, TimebotError
from timebot.l10n import _, ngettext
from timebot.l10n.loading import load_localisation
from timebot.runtime import Runtime
from timebot.state.teams_models import TeamsOutgoing

log = structlog.get_logger("timebot.teams.actions")

APPROVAL_STATE = """
query State($person: SvcId!, $start: SvcTimestamp!, $end: SvcTimestamp!) {
  getApprovalState(personId: $person, startTime: $start, endTime: $end) {
    status currentStage submitId pendingApprovers { id name }
  }
}"""
OWN_NAME = "query Me($id: SvcId!) { getPerson(id: $id) { id name } }"
APPROVE_MUTATION = "mutation Approve($id: SvcId!) { approveTimesheet(id: $id) { id status } }"
REJECT_MUTATION = """
mutation Reject($id: SvcId!, $stage: Int!, $comment: String!) {
  rejectTimesheet(id: $id, stage: $stage, comment: $comment) { id status }
}"""
NOT_CONNECTED = "Your organisation has not connected this Microsoft 365 tenant."
BAD_CARD = "This card is not one timebot can read (an old or altered message)."
STATUS = {"d": "draft", "s": "submitted", "a": "approved", "r": "rejected"}


def why_not(state: dict[str, Any] | None, request: cards.CardRequest, person_id: str) -> str:
    """Why this person may not decide this request now (what their card says instead)."""
    if not state or not state.get("submitId"):
        return _("This timesheet is no longer waiting for approval.")
    if state.get("submitId") != request.submit_id:
        return _("This request is out of date: the timesheet was submitted again since.")
    status = STATUS.get(str(state.get("status")), state.get("status"))
    if status == "approved":
        return _("This timesheet is already approved.")
    if status == "rejected":
        return _("This timesheet was already rejected.")
    if status != "submitted":
        return _("This timesheet is no longer waiting for approval.")
    if int(state.get("currentStage") or 0) != request.stage:
        return _("This stage was already decided; the timesheet has moved on.")
    pending = state.get("pendingApprovers") or []
    if person_id not in {p.get("id") for p in pending}:
        names = ", ".join(cards.escape(str(p.get("name"))) for p in pending) or _("nobody")
        return _("You are not an approver of this stage: it waits for {names}.").format(
            names=names)
    return _("The service refused the decision.")


class CardActions:
    def __init__(self, runtime: Runtime, tenants: TeamsTenants, identity: TeamsIdentity,
                 outbox: TeamsOutbox) -> None:
        self.runtime, self.tenants, self.identity, self.outbox = (
            runtime, tenants, identity, outbox)

    async def __call__(self, activity: Activity, _claims: dict[str, Any]) -> InvokeAnswer:
        value = activity.value if isinstance(activity.value, dict) else {}
        action = value.get("action")
        action = action if isinstance(action, dict) else {}
        verb, data = str(action.get("verb") or ""), action.get("data")
        person = await self._person(activity)
        if isinstance(person, InvokeAnswer):
            return person
        conversation = str(activity.conversation.id) if activity.conversation else ""
        key = await self.runtime.directory.integration_key(person.organisation_id)
        with l10n.using(await load_localisation(self.runtime.client, key, person.person_id)):
            try:
                if verb == cards.APPROVE_ALL:
                    return await self._approve_all(person, cards.approve_all_of(data),
                                                   conversation)
                request = cards.request_of(data)
            except cards.BadCard as error:
                log.warning("teams_card_unreadable", verb=verb[:40], error=str(error))
                return InvokeAnswer(200, cards.error_response(400, BAD_CARD))
            row = await self.outbox.latest_with_ref(
                ref_of(request.submit_id, request.stage, person.person_id), conversation)
            if verb == cards.REFRESH or (row is not None and row.context.get("outcome")):
                return await self._current(person, request, row)  # a stale card: as it is
            if verb == cards.APPROVE:
                return (await self._decide(person, request, row, None))[1]
            if verb == cards.REJECT:
                reason = cards.reason_of(data)
                if not reason:
                    return InvokeAnswer(200, cards.text_response(_(
                        "A rejection needs a reason: the timesheet was not rejected.")))
                return (await self._decide(person, request, row, reason))[1]
        return InvokeAnswer(200, cards.error_response(400, BAD_CARD))

    async def _person(self, activity: Activity) -> TeamsPerson | InvokeAnswer:
        """The person the verified activity names, or the answer refusing the action."""
        tenant = await self.tenants.tenant(tenant_of(activity))
        if tenant is None or not tenant.active:
            return InvokeAnswer(200, cards.error_response(403, NOT_CONNECTED))
        sender = activity.from_property
        conversation = activity.conversation
        if sender is None or conversation is None:
            return InvokeAnswer(200, cards.error_response(400, BAD_CARD))
        try:
            return await self.identity.resolve(tenant, Sender(
                tenant.tenant_id, str(sender.aad_object_id or ""), str(sender.id),
                str(conversation.id), str(activity.service_url or ""),
                activity.local_timezone))
        except NotIdentified as refusal:
            return InvokeAnswer(200, cards.error_response(401, refusal.message))

    async def _state(self, organisation_id: str, request: cards.CardRequest
                     ) -> dict[str, Any] | None:
        key = await self.runtime.directory.integration_key(organisation_id)
        try:
            data = await self.runtime.client.execute(APPROVAL_STATE, {
                "person": request.person_id, "start": request.start_ms,
                "end": request.end_ms}, apikey=key)
        except (PermissionRefused, ServiceRequestError):  # a person this org does not have
            return None
        state: dict[str, Any] | None = data.get("getApprovalState")
        return state

    async def _current(self, person: TeamsPerson, request: cards.CardRequest,
                       row: TeamsOutgoing | None) -> InvokeAnswer:
        """The card as it is now: the row's (its outcome once settled), else what the
        service's state says."""
        shown = card_of(row) if row is not None else None
        if shown is not None:
            return InvokeAnswer(200, cards.card_response(shown))
        state = await self._state(person.organisation_id, request)
        return InvokeAnswer(200, cards.card_response(self._outcome_card(
            row, request, why_not(state, request, person.person_id))))

    def _outcome_card(self, row: TeamsOutgoing | None, request: cards.CardRequest,
                      outcome: str) -> dict[str, Any]:
        if row is not None:
            return outcome_activity(row, outcome)["attachments"][0]["content"]  # type: ignore[no-any-return]
        return cards.notice_card([outcome])

    async def _claim(self, verb: str, request: cards.CardRequest, person_id: str) -> bool:
        return await self.tenants.claim(
            f"teams-decide:{verb}:{request.submit_id}:{request.stage}:{person_id}")

    async def _decide(self, person: TeamsPerson, request: cards.CardRequest,
                      row: TeamsOutgoing | None, reason: str | None
                      ) -> tuple[str | None, InvokeAnswer]:
        """Claim, then decide as the person: (None when decided, else why not; the answer
        with the card that shows what became of it)."""
        verb = cards.APPROVE if reason is None else cards.REJECT
        if not await self._claim(verb, request, person.person_id):
            log.info("teams_decision_retried", submit=request.submit_id)
            return (_("Your decision on this timesheet was already recorded."),
                    await self._current(person, request, row))
        client = self.runtime.client
        try:
            if reason is None:
                await client.execute(APPROVE_MUTATION, {"id": request.submit_id},
                                     apikey=person.apikey)
            else:
                await client.execute(REJECT_MUTATION, {
                    "id": request.submit_id, "stage": request.stage, "comment": reason},
                    apikey=person.apikey)
        except (PermissionRefused, ServiceRequestError):
            state = await self._state(person.organisation_id, request)
            refusal = why_not(state, request, person.person_id)
            return refusal, InvokeAnswer(200, cards.card_response(self._outcome_card(
                row, request, refusal)))
        except TimebotError:
            raise
        me = await client.execute(OWN_NAME, {"id": person.person_id}, apikey=person.apikey)
        name = cards.escape(str((me.get("getPerson") or {}).get("name") or ""))
        at = cards.when(self.runtime.clock.now_ms())
        outcome = (_("Approved by {by} at {at}").format(by=name, at=at) if reason is None
                   else _("Rejected by {by} at {at}").format(by=name, at=at)
                   + f": {cards.escape(reason)}")
        card = self._outcome_card(row, request, outcome)
        if row is not None:  # its reader sees it now: the event's settling leaves it be
            await self.outbox.record_shown(row.id, cards.message(card), {"outcome": outcome})
        log.info("teams_decided", verb=verb, submit=request.submit_id, stage=request.stage)
        return None, InvokeAnswer(200, cards.card_response(card))

    async def _approve_all(self, person: TeamsPerson, named: list[tuple[str, int]],
                           conversation: str) -> InvokeAnswer:
        """Each named request still waiting for this person at that stage, approved as them
        (claimed one by one); one card lists what became of each."""
        lines: list[str] = []
        approved = 0
        for number, (submit_id, stage) in enumerate(named, 1):
            request = await self._request_of(person, submit_id, stage)
            if request is None:
                lines.append(f"{number}. " + _("no longer waiting for approval"))
                continue
            state = await self._state(person.organisation_id, request)
            refusal = why_not(state, request, person.person_id)
            if refusal != _("The service refused the decision."):
                lines.append(f"{number}. {refusal}")
                continue
            row = await self.outbox.latest_with_ref(
                ref_of(submit_id, stage, person.person_id), conversation)
            refused, _answer = await self._decide(person, request, row, None)
            if refused is None:
                approved += 1
                lines.append(f"{number}. " + _("approved"))
            else:
                lines.append(f"{number}. {refused}")
        head = ngettext("You approved {approved} of the {n} timesheet:",
                        "You approved {approved} of the {n} timesheets:", len(named)).format(
            approved=approved, n=len(named))
        log.info("teams_approve_all", named=len(named), approved=approved)
        return InvokeAnswer(200, cards.card_response(cards.notice_card([head, *lines])))

    async def _request_of(self, person: TeamsPerson, submit_id: str, stage: int
                          ) -> cards.CardRequest | None:
        key = await self.runtime.directory.integration_key(person.organisation_id)
        try:
            data = await self.runtime.client.execute(
                "query E($id: SvcId!) { getApprovalEventById(id: $id) { person { id } "
                "startTime { ts } endTime { ts } } }", {"id": submit_id}, apikey=key)
        except (PermissionRefused, ServiceRequestError):  # another organisation's, or none
            return None
        event = data.get("getApprovalEventById")
        if not event or not event.get("person"):
            return None
        return cards.CardRequest(submit_id, stage, "", str(event["person"]["id"]),
                                 int(event["startTime"]["ts"]), int(event["endTime"]["ts"]))
