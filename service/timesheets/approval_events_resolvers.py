"""Approval events (submit, approve, reject, ...): their fields, the one a time record falls
under, and the events of a person's timesheets, for those who may see them."""

from __future__ import annotations

from typing import Any, cast

from ariadne import ObjectType, QueryType
from sqlalchemy import Table, bindparam, select

from service.as_loaded import Columns
from service.errors import NotFound, PermissionDenied
from service.graphql.context import RequestContext
from service.graphql.fastpath import plain
from service.graphql.lookahead import requested
from service.lookup import get_in_org
from service.models import Person, TimeRecord
from service.people import LABELLED, PERSONS, ROLE_OF_PERSON, ROLES, person_of
from service.timesheets.access import can_view_timesheet, person_summary
from service.timesheets.models import ApprovalEvent, Timesheet
from service.timesheets.state import covering_timesheet, timesheets_overlapping

query = QueryType()
time_record_type = ObjectType("SvcTimeRecord")
event_type = ObjectType("SvcApprovalEvent")


@event_type.field("person")
async def resolve_event_person(event: ApprovalEvent, info: Any) -> Person | None:
    context: RequestContext = info.context
    return await context.session.get(Person, event.person_id)


@event_type.field("startTime")
@plain
def resolve_event_start(event: ApprovalEvent, _info: Any) -> int:
    return event.start_ms


@event_type.field("endTime")
@plain
def resolve_event_end(event: ApprovalEvent, _info: Any) -> int:
    return event.end_ms


@event_type.field("ts")
@plain
def resolve_event_ts(event: ApprovalEvent, _info: Any) -> int:
    return event.ts_ms


@event_type.field("submitId")
@plain
def resolve_event_submit_id(event: ApprovalEvent, _info: Any) -> str | None:
    return event.submit_id


@event_type.field("by")
async def resolve_event_by(event: ApprovalEvent, info: Any) -> Any:
    if event.by_id is None:
        return None
    context: RequestContext = info.context
    return person_summary(await context.session.get(Person, event.by_id))


@event_type.field("timeRecordIds")
@plain
def resolve_event_changes(event: ApprovalEvent, _info: Any) -> Any:
    return event.changes


@event_type.field("rejectedStage")
@plain
def resolve_event_rejected_stage(event: ApprovalEvent, _info: Any) -> int | None:
    return event.rejected_stage


@event_type.field("systemAction")
@plain
def resolve_event_system_action(event: ApprovalEvent, _info: Any) -> str | None:
    return event.system_action


@time_record_type.field("event")
async def resolve_record_event(record: TimeRecord, info: Any) -> ApprovalEvent | None:
    context: RequestContext = info.context
    timesheet = await covering_timesheet(
        context.session, context.org_id, record.person_id, record.start_ms
    )
    if timesheet is None or timesheet.submit_id is None:
        return None
    return await context.session.get(ApprovalEvent, timesheet.submit_id)


# An event with its person (for `person { … }`, asked for by nearly every reader of events).
_EVENT = Columns(ApprovalEvent, prefix="e_")
_EVENTS = cast(Table, ApprovalEvent.__table__)
# Core columns made entities by as_loaded (the ORM's loading of three entities cost more than
# the statement): the event, its person and their role, as the ORM's joined loading gave them.
_EVENT_WITH_PERSON = (
    select(*_EVENT.labelled, *LABELLED)
    .select_from(_EVENTS)
    .outerjoin(PERSONS, PERSONS.c.id == _EVENTS.c.person_id)
    .outerjoin(ROLES, ROLE_OF_PERSON)
    .where(_EVENTS.c.id == bindparam("event_id"),
           _EVENTS.c.organisation_id == bindparam("event_org"))
)


async def _visible_event(context: RequestContext, event_id: str, argument: str,
                         with_person: bool = False) -> ApprovalEvent:
    """The event, if the caller may see its timesheet (`can_view_timesheet`); the timesheet is
    read only when the caller may not see the owner's data anyway (an event's person is its
    timesheet's person). `with_person`: its person is read along with it (held for this
    request, `resolve_event_person` then finds it in the session)."""
    if with_person:
        row = (await context.session.execute(
            _EVENT_WITH_PERSON, {"event_id": event_id, "event_org": context.org_id})).first()
        if row is None:
            raise NotFound(argument, event_id, "approval event")
        person = person_of(context.session, row, _EVENT.width)
        found = _EVENT.build(context.session, row, 0)
        assert found is not None
        event = found
        if person is not None:
            context.loaded_ahead.append(person)
    else:
        event = await get_in_org(context.session, ApprovalEvent, context.org_id, event_id,
                                 argument, "approval event")
    if await context.can_access_person_data(event.person_id):
        return event
    timesheet = await context.session.get(Timesheet, event.timesheet_id)
    assert timesheet is not None
    if not await can_view_timesheet(context, timesheet):
        raise PermissionDenied("you may not see this person's timesheets")
    return event


@query.field("getApprovalEventById")
async def resolve_get_event(_root: Any, info: Any, id: str) -> ApprovalEvent:
    return await _visible_event(info.context, id, "id", "person" in requested(info))


async def _events(context: RequestContext, person_id: str,
                  period: tuple[int, int] | None) -> list[ApprovalEvent]:
    await get_in_org(context.session, Person, context.org_id, person_id, "personId", "person")
    if period is None:
        timesheets = list(await context.session.scalars(select(Timesheet).where(
            Timesheet.organisation_id == context.org_id, Timesheet.person_id == person_id
        )))
    else:
        timesheets = await timesheets_overlapping(
            context.session, context.org_id, person_id, period[0], period[1]
        )
    visible = [t.id for t in timesheets if await can_view_timesheet(context, t)]
    if not visible:
        return []
    rows = await context.session.scalars(
        select(ApprovalEvent)
        .where(ApprovalEvent.organisation_id == context.org_id,
               ApprovalEvent.timesheet_id.in_(visible))
        .order_by(ApprovalEvent.ts_ms, ApprovalEvent.id)
    )
    return list(rows)


@query.field("getPersonApprovalEvents")
async def resolve_person_events(_root: Any, info: Any, personId: str) -> list[ApprovalEvent]:
    return await _events(info.context, personId, None)


@query.field("getApprovalEvents")
async def resolve_events(
    _root: Any, info: Any, personId: str, startTime: int, endTime: int
) -> list[ApprovalEvent]:
    return await _events(info.context, personId, (startTime, endTime))


BINDABLES = [query, time_record_type, event_type]
