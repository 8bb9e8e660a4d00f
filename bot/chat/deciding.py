"""Deciding a review request from chat, once, as the person with their OWN key.

A click (Approve, Reject with its reason, one of "Approve all (N)") is claimed first: a double
click, a platform's retry, a stale card clicked again decide once (`Claims`: one row per
(verb, submission, stage, person), table `slack_claims`, whichever platform claims). Then the
service decides with the person's key; its lock decides between two approvers at once. A
refusal releases the claim and is explained (bot.chat.approvals.refusal_reason, from the state
read with the organisation's integration key).

    claims = Claims(runtime)
    why_not = await decide(runtime, claims, person, request, None, who=user_id, markup=markup)
    # None: decided (the outcome message follows from the service's event); else why not

`approval_state` is the request's state now (submission, status, stage, pending approvers),
or None when the organisation has no such person or period.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import delete
from sqlalchemy.exc import IntegrityError

from bot.chat.approvals import SERVICE_REFUSED, Request, refusal_reason
from bot.chat.markup import Markup
from bot.chat.person import ChatPerson
from timebot.errors import PermissionRefused, ServiceRequestError, TimebotError
from timebot.l10n import _
from timebot.state.db import unit_of_work
from timebot.state.models import SlackClaim

if TYPE_CHECKING:
    from timebot.runtime import Runtime

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


class Claims:
    """Claims that make a decision happen once: `claim` is True for the first of the same
    key only (a durable row), `release` gives it back when the decision did not happen."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    async def claim(self, key: str, who: str) -> bool:
        """`who`: the chat user whose click claims (kept with the row, for the record)."""
        try:
            async with unit_of_work(self.runtime.state_sessions) as session:
                session.add(SlackClaim(key=key, slack_user_id=who,
                                       created_ms=self.runtime.clock.now_ms()))
        except IntegrityError:
            return False
        return True

    async def release(self, key: str) -> None:
        async with unit_of_work(self.runtime.state_sessions) as session:
            await session.execute(delete(SlackClaim).where(SlackClaim.key == key))


def claim_key(request: Request, person_id: str, *, reject: bool) -> str:
    """One decision: the verb, the submission, its stage, the person deciding."""
    verb = "reject" if reject else "approve"
    return f"{verb}:{request.submit_id}:{request.stage}:{person_id}"


async def approval_state(runtime: Runtime, organisation_id: str, request: Request
                         ) -> dict[str, Any] | None:
    """The request's approval state now, read with the organisation's integration key."""
    key = await runtime.directory.integration_key(organisation_id)
    try:
        data = await runtime.client.execute(
            APPROVAL_STATE,
            {"person": request.person_id, "start": request.start_ms, "end": request.end_ms},
            apikey=key,
        )
    except (PermissionRefused, ServiceRequestError):  # a person this org does not have
        return None
    state: dict[str, Any] | None = data.get("getApprovalState")
    return state


async def decide(runtime: Runtime, claims: Claims, person: ChatPerson, request: Request,
                 comment: str | None, *, who: str, markup: Markup) -> str | None:
    """Claim, then approve (`comment` None) or reject with `comment` as the person; None when
    done, else why not (in the language in force, chat markup)."""
    claim = claim_key(request, person.person_id, reject=comment is not None)
    if not await claims.claim(claim, who):
        return _("Your decision on this timesheet was already recorded.")
    try:
        if comment is None:
            await runtime.client.execute(
                APPROVE_MUTATION, {"id": request.submit_id}, apikey=person.apikey)
        else:
            await runtime.client.execute(
                REJECT_MUTATION,
                {"id": request.submit_id, "stage": request.stage, "comment": comment},
                apikey=person.apikey)
    except (PermissionRefused, ServiceRequestError) as error:
        await claims.release(claim)
        state = await approval_state(runtime, person.organisation_id, request)
        reason = refusal_reason(state, request, person.person_id, markup)
        if reason == _(SERVICE_REFUSED) and isinstance(error, ServiceRequestError):
            reason = markup.escape("; ".join(error.messages))
        return reason
    except TimebotError:
        await claims.release(claim)
        raise
    return None
