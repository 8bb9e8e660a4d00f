"""Absence types (time off): read by everyone, edited by admins; and getAbsenceConsumed.

getAbsenceConsumed counts the person's records of the absence type that start in
[startTime, endTime), in the type's unit:
- `hour`: the sum of their durations, in hours;
- `day`: per calendar day (in the organisation's time zone), that day's absence duration
  divided by a working day of 8 hours, at most 1 per day; the days are summed.
An absence counts as soon as it is recorded, whatever its timesheet's approval status.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime, tzinfo
from typing import Any

from ariadne import MutationType, ObjectType, QueryType
from sqlalchemy import ColumnElement, and_, func, select

from service.absences.models import ABSENCE_UNIT_HOUR
from service.access import SETTINGS, require
from service.errors import BadInput, PermissionDenied, RuleViolation
from service.graphql.context import RequestContext
from service.graphql.filters import Condition, filter_clause
from service.lookup import get_in_org, get_many_in_org
from service.models import AbsenceType, Person, TimeRecord
from service.organisation import person_zone
from service.type_options import ABSENCE, copy_options

HOUR_MS = 3_600_000
WORKING_DAY_MS = 8 * HOUR_MS

query = QueryType()
mutation = MutationType()
absence_type = ObjectType("SvcAbsenceType")


@absence_type.field("involveCosts")
def resolve_involve_costs(item: AbsenceType, _info: Any) -> bool:
    return item.involve_costs


def _require_admin(context: RequestContext) -> None:
    require(context, SETTINGS, "edit absence types")


def _like(value: str) -> str:
    escaped = value.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


FILTERS: Mapping[str, Condition] = {
    "id": lambda value: AbsenceType.id == value,
    "notId": lambda value: AbsenceType.id != value,
    "name": lambda value: func.lower(AbsenceType.name).like(_like(str(value)), escape="\\"),
    "archived": lambda value: AbsenceType.archived.is_(bool(value)),
}


def _conditions(
    context: RequestContext,
    filter: Sequence[Mapping[str, Any] | None] | None,
    archived: bool | None,
) -> list[ColumnElement[bool]]:
    """archived: true also returns archived types (the filter's `archived` picks exactly)."""
    conditions: list[ColumnElement[bool]] = [AbsenceType.organisation_id == context.org_id]
    if not archived:
        conditions.append(AbsenceType.archived.is_(False))
    if filter:
        conditions.append(filter_clause(filter, FILTERS))
    return conditions


async def _load(context: RequestContext, type_id: str, argument: str = "id") -> AbsenceType:
    return await get_in_org(
        context.session, AbsenceType, context.org_id, type_id, argument, "absence type"
    )


# ---------------------------------------------------------------------------- queries


@query.field("getAbsenceType")
async def resolve_get_absence_type(_root: Any, info: Any, id: str) -> AbsenceType:
    return await _load(info.context, id)


@query.field("getAbsenceTypes")
async def resolve_get_absence_types(
    _root: Any,
    info: Any,
    filter: Sequence[Mapping[str, Any] | None] | None = None,
    archived: bool | None = None,
) -> list[AbsenceType]:
    context: RequestContext = info.context
    statement = (
        select(AbsenceType)
        .where(and_(*_conditions(context, filter, archived)))
        .order_by(AbsenceType.name, AbsenceType.id)
    )
    return list(await context.session.scalars(statement))


@query.field("countAbsenceTypes")
async def resolve_count_absence_types(
    _root: Any,
    info: Any,
    filter: Sequence[Mapping[str, Any] | None] | None = None,
    archived: bool | None = None,
) -> int:
    context: RequestContext = info.context
    statement = (
        select(func.count())
        .select_from(AbsenceType)
        .where(and_(*_conditions(context, filter, archived)))
    )
    return int(await context.session.scalar(statement) or 0)


def consumed(unit: str, records: Sequence[tuple[int, int]], zone: tzinfo) -> float:
    """Amount consumed by (start_ms, duration_ms) records, in `unit` (see module docstring)."""
    if unit == ABSENCE_UNIT_HOUR:
        return sum(duration for _start, duration in records) / HOUR_MS
    per_day: dict[Any, int] = defaultdict(int)
    for start, duration in records:
        per_day[datetime.fromtimestamp(start / 1000, tz=zone).date()] += duration
    return float(sum(min(1.0, total / WORKING_DAY_MS) for total in per_day.values()))


@query.field("getAbsenceConsumed")
async def resolve_get_absence_consumed(
    _root: Any,
    info: Any,
    personId: str,
    absenceId: str,
    startTime: int,
    endTime: int,
) -> float:
    context: RequestContext = info.context
    person = await get_in_org(
        context.session, Person, context.org_id, personId, "personId", "person"
    )
    if not await context.can_access_person_data(person.id):
        raise PermissionDenied("you may not see this person's absences")
    absence = await _load(context, absenceId, "absenceId")
    if endTime < startTime:
        raise BadInput("endTime", "must not be before startTime")
    rows = await context.session.execute(
        select(TimeRecord.start_ms, TimeRecord.duration_ms).where(
            TimeRecord.organisation_id == context.org_id,
            TimeRecord.person_id == person.id,
            TimeRecord.start_ms >= startTime,
            TimeRecord.start_ms < endTime,
            TimeRecord.absence_id == absence.id,
        )
    )
    records = [(int(start), int(duration)) for start, duration in rows]
    zone = await person_zone(context.session, context.organisation, person)
    return round(consumed(absence.unit, records, zone), 6)


# ---------------------------------------------------------------------------- mutations


@mutation.field("addAbsenceType")
async def resolve_add_absence_type(
    _root: Any, info: Any, name: str, color: str | None = None
) -> AbsenceType:
    context: RequestContext = info.context
    _require_admin(context)
    item = AbsenceType(
        organisation_id=context.org_id,
        name=name,
        color=color,
        unit="day",
        involve_costs=False,
        archived=False,
    )
    context.session.add(item)
    await context.session.flush()
    return item


@mutation.field("duplicateAbsenceType")
async def resolve_duplicate_absence_type(
    _root: Any, info: Any, id: str, name: str
) -> AbsenceType:
    context: RequestContext = info.context
    _require_admin(context)
    source = await _load(context, id)
    item = AbsenceType(
        organisation_id=context.org_id,
        name=name,
        color=source.color,
        unit=source.unit,
        involve_costs=source.involve_costs,
        archived=False,
    )
    context.session.add(item)
    await context.session.flush()
    await copy_options(context.session, ABSENCE, source.id, item.id)
    return item


async def _set_archived(
    context: RequestContext, ids: Sequence[str | None], archived: bool
) -> list[AbsenceType]:
    _require_admin(context)
    items = await get_many_in_org(
        context.session, AbsenceType, context.org_id, ids, "ids", "absence type"
    )
    for item in items:
        item.archived = archived
    return items


@mutation.field("archiveAbsenceType")
async def resolve_archive_absence_type(_root: Any, info: Any, id: str) -> AbsenceType:
    context: RequestContext = info.context
    _require_admin(context)
    item = await _load(context, id)
    item.archived = True
    return item


@mutation.field("unarchiveAbsenceType")
async def resolve_unarchive_absence_type(
    _root: Any, info: Any, id: str
) -> AbsenceType:
    context: RequestContext = info.context
    _require_admin(context)
    item = await _load(context, id)
    item.archived = False
    return item


@mutation.field("archiveAbsenceTypes")
async def resolve_archive_absence_types(
    _root: Any, info: Any, ids: Sequence[str | None]
) -> list[AbsenceType]:
    return await _set_archived(info.context, ids, True)


@mutation.field("unarchiveAbsenceTypes")
async def resolve_unarchive_absence_types(
    _root: Any, info: Any, ids: Sequence[str | None]
) -> list[AbsenceType]:
    return await _set_archived(info.context, ids, False)


@mutation.field("deleteAbsenceType")
async def resolve_delete_absence_type(
    _root: Any, info: Any, id: str, check: bool | None = None
) -> AbsenceType:
    """Refused while time records use the type (archive it instead); `check: true` only
    validates that and deletes nothing."""
    context: RequestContext = info.context
    _require_admin(context)
    item = await _load(context, id)
    used = int(
        await context.session.scalar(
            select(func.count())
            .select_from(TimeRecord)
            .where(TimeRecord.organisation_id == context.org_id, TimeRecord.absence_id == item.id)
        )
        or 0
    )
    if used:
        raise RuleViolation(
            f"The absence type {item.name!r} is used by {used} time record(s); "
            "archive it instead of deleting it"
        )
    if check:
        context.skip_audit = True
        return item
    await context.session.delete(item)
    await context.session.flush()
    return item


@mutation.field("editAbsenceTypeName")
async def resolve_edit_absence_type_name(
    _root: Any, info: Any, id: str, name: str
) -> AbsenceType:
    context: RequestContext = info.context
    _require_admin(context)
    item = await _load(context, id)
    item.name = name
    return item


@mutation.field("editAbsenceTypeUnit")
async def resolve_edit_absence_type_unit(
    _root: Any, info: Any, id: str, unit: str
) -> AbsenceType:
    context: RequestContext = info.context
    _require_admin(context)
    item = await _load(context, id)
    item.unit = unit
    return item


@mutation.field("editAbsenceTypeInvolveCosts")
async def resolve_edit_absence_type_involve_costs(
    _root: Any, info: Any, id: str, involveCosts: bool
) -> AbsenceType:
    context: RequestContext = info.context
    _require_admin(context)
    item = await _load(context, id)
    item.involve_costs = involveCosts
    return item


@mutation.field("editAbsenceTypeColor")
async def resolve_edit_absence_type_color(
    _root: Any, info: Any, id: str, color: str | None = None
) -> AbsenceType:
    context: RequestContext = info.context
    _require_admin(context)
    item = await _load(context, id)
    item.color = color
    return item


BINDABLES = [query, mutation, absence_type]
