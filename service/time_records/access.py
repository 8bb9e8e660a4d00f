"""Who may see and edit a person's time records: the person, their managers and admins (by
role), or else an approver by the status of the timesheet of that period (edit rights by
status: service/timesheets/timesheet_edits.py). Loading a record checks it."""

from __future__ import annotations

from service.errors import PermissionDenied
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import Person, TimeRecord
from service.timesheets import may_edit_by_status


async def load_owner(context: RequestContext, person_id: str, argument: str) -> Person:
    """The person whose records are written: the caller themself needs no lookup (their
    authentication loaded them into this session), anyone else is found in the organisation
    (NotFound naming `argument`)."""
    if person_id == context.person.id:
        return context.person
    return await get_in_org(
        context.session, Person, context.org_id, person_id, argument, "person"
    )


async def require_person_access(context: RequestContext, person_id: str) -> None:
    if not await context.can_access_person_data(person_id):
        raise PermissionDenied("you may not see or edit this person's time records")


async def require_edit_access(context: RequestContext, person_id: str, start_ms: int) -> None:
    """Access by role (the owner, their managers, admins), or else by the status of the
    timesheet for that period: its current-stage approver, or the approver who rejected it
    (edit rights by status). The status rules themselves are checked by
    `timerecords_writes.guard_edit`."""
    if await context.can_access_person_data(person_id):
        return
    if not await may_edit_by_status(context, person_id, start_ms):
        raise PermissionDenied("you may not see or edit this person's time records")


async def load_record(context: RequestContext, record_id: str) -> TimeRecord:
    record = await get_in_org(
        context.session, TimeRecord, context.org_id, record_id, "id", "time record"
    )
    await require_person_access(context, record.person_id)
    return record


async def load_record_to_edit(context: RequestContext, record_id: str) -> TimeRecord:
    record = await get_in_org(
        context.session, TimeRecord, context.org_id, record_id, "id", "time record"
    )
    await require_edit_access(context, record.person_id, record.start_ms)
    return record
