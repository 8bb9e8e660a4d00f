"""What the approval resolvers and the Journal's share about a request: who may see a timesheet,
the caller as the workflow's actor, and a person as a SvcPersonSummary."""

from __future__ import annotations

from typing import Any

from service.graphql.context import RequestContext
from service.models import Person
from service.timesheets.actor import Actor
from service.timesheets.rows import SheetLike


def caller_actor(context: RequestContext) -> Actor:
    """The caller, acting on the workflow now."""
    return Actor(context.session, context.organisation, context.person, context.now_ms)


async def can_view_timesheet(context: RequestContext, timesheet: SheetLike) -> bool:
    """Its owner, whoever may see the owner's data, and anyone asked to approve it (asked
    first: an approver's reply needs no read of the people they manage)."""
    if any(context.person.id in (s.get("approvers") or []) for s in timesheet.stages):
        return True
    return await context.can_access_person_data(timesheet.person_id)


def person_summary(person: Person | None) -> dict[str, Any] | None:
    if person is None:
        return None
    return {"id": person.id, "name": person.name, "color": person.color}
