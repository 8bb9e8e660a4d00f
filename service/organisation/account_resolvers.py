"""Scheduling and cancelling the organisation's deletion; `SvcOrganisation.scheduledDeletion`."""

from __future__ import annotations

from typing import Any

from ariadne import MutationType, ObjectType

from service.errors import RuleViolation
from service.graphql.context import RequestContext
from service.models import Organisation, Person
from service.organisation.account_life import AccountLifeError, cancel_deletion, schedule_deletion
from service.structure import require_admin

mutation = MutationType()
organisation_type = ObjectType("SvcOrganisation")


@organisation_type.field("scheduledDeletion")
async def resolve_scheduled_deletion(
    organisation: Organisation, info: Any
) -> dict[str, Any] | None:
    if organisation.deletion_due_ms is None:
        return None
    context: RequestContext = info.context
    by = None
    if organisation.deletion_by_id is not None:
        by = await context.session.get(Person, organisation.deletion_by_id)
    # The administrator who asked may since have been deleted: the account still answers for it.
    return {"by": by or context.person, "at": organisation.deletion_due_ms}


@mutation.field("scheduleOrganisationDeletion")
async def resolve_schedule_deletion(_root: Any, info: Any) -> Organisation:
    context: RequestContext = info.context
    require_admin(context, "do this")
    was_scheduled = context.organisation.deletion_due_ms is not None
    organisation = await schedule_deletion(
        context.session, context.organisation, context.person, context.now_ms
    )
    if was_scheduled:
        context.skip_audit = True
    return organisation


@mutation.field("cancelOrganisationDeletion")
async def resolve_cancel_deletion(_root: Any, info: Any) -> Organisation:
    context: RequestContext = info.context
    require_admin(context, "do this")
    try:
        return await cancel_deletion(
            context.session, context.organisation, context.person, context.now_ms
        )
    except AccountLifeError as error:
        raise RuleViolation(str(error)) from error


BINDABLES = [mutation, organisation_type]
