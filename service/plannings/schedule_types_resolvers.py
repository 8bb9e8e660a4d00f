"""Schedule types: read by everyone, edited by admins (the days of the cycle, archive,
duplicate, delete). The day rules are in service/plannings/schedule_rules.py."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ariadne import MutationType, ObjectType, QueryType
from sqlalchemy import ColumnElement, and_, delete, func, select

from service.access import SETTINGS, requirer
from service.errors import BadInput
from service.graphql.context import RequestContext
from service.graphql.filters import Condition, filter_clause
from service.lookup import get_in_org, get_many_in_org
from service.plannings import schedule_rules as rules
from service.plannings.models import ScheduleTimelineEntry, ScheduleType
from service.structure import name_contains

require_permission = requirer(SETTINGS)

query = QueryType()
mutation = MutationType()
schedule_type = ObjectType("SvcScheduleType")

FILTERS: Mapping[str, Condition] = {
    "id": lambda value: ScheduleType.id == value,
    "notId": lambda value: ScheduleType.id != value,
    "name": lambda value: name_contains(ScheduleType.name, str(value)),
    "archived": lambda value: ScheduleType.archived.is_(bool(value)),
}


def days_of(item: ScheduleType) -> list[rules.Day]:
    return rules.days_from_json(item.days, item.length)


@schedule_type.field("calendarStartTime")
def resolve_calendar_start(item: ScheduleType, _info: Any) -> int:
    return item.calendar_start_ms


@schedule_type.field("days")
def resolve_days(item: ScheduleType, _info: Any) -> list[dict[str, Any]]:
    return [day.as_json() for day in days_of(item)]


@schedule_type.field("relations")
def resolve_relations(item: ScheduleType, _info: Any) -> ScheduleType:
    return item


def _conditions(
    context: RequestContext, filter: Sequence[Mapping[str, Any] | None] | None,
    archived: bool | None,
) -> list[ColumnElement[bool]]:
    conditions: list[ColumnElement[bool]] = [ScheduleType.organisation_id == context.org_id]
    if not archived and not any(item and item.get("archived") is not None
                                for item in filter or []):
        conditions.append(ScheduleType.archived.is_(False))
    if filter:
        conditions.append(filter_clause(filter, FILTERS))
    return conditions


async def load(context: RequestContext, type_id: str | None, argument: str = "id",
               *, for_update: bool = False) -> ScheduleType:
    return await get_in_org(context.session, ScheduleType, context.org_id, type_id, argument,
                            "schedule type", for_update=for_update)


@query.field("getScheduleType")
async def resolve_get(_root: Any, info: Any, id: str) -> ScheduleType:
    return await load(info.context, id)


@query.field("getScheduleTypes")
async def resolve_get_all(_root: Any, info: Any, filter: Any = None,
                          archived: bool | None = None) -> list[ScheduleType]:
    context: RequestContext = info.context
    statement = (select(ScheduleType).where(and_(*_conditions(context, filter, archived)))
                 .order_by(func.lower(ScheduleType.name), ScheduleType.id))
    return list(await context.session.scalars(statement))


@query.field("countScheduleTypes")
async def resolve_count(_root: Any, info: Any, filter: Any = None,
                        archived: bool | None = None) -> int:
    context: RequestContext = info.context
    statement = (select(func.count()).select_from(ScheduleType)
                 .where(and_(*_conditions(context, filter, archived))))
    return int(await context.session.scalar(statement) or 0)


def _name(value: str) -> str:
    name = value.strip()
    if not name:
        raise BadInput("name", "must not be empty")
    return name


def _require_permission(context: RequestContext) -> None:
    require_permission(context, "edit work schedules")


@mutation.field("addScheduleType")
async def resolve_add(_root: Any, info: Any, name: str, calendarStartTime: int,
                      color: str | None = None) -> ScheduleType:
    context: RequestContext = info.context
    _require_permission(context)
    item = ScheduleType(organisation_id=context.org_id, name=_name(name), color=color,
                        archived=False, calendar_start_ms=calendarStartTime, length=7,
                        days=[rules.EMPTY_DAY.as_json() for _ in range(7)])
    context.session.add(item)
    await context.session.flush()
    return item


async def _edit(info: Any, id: str, change: Callable[[ScheduleType], None]) -> ScheduleType:
    context: RequestContext = info.context
    _require_permission(context)
    item = await load(context, id, for_update=True)
    change(item)
    await context.session.flush()
    return item


def _set_days(item: ScheduleType, days: Sequence[rules.Day]) -> None:
    item.days = [day.as_json() for day in days]
    item.length = len(days)


def _edit_day(item: ScheduleType, day_number: int,
              change: Callable[[rules.Day], rules.Day]) -> None:
    days = days_of(item)
    rules.check_day_number(day_number, len(days))
    days[day_number] = change(days[day_number])
    _set_days(item, days)


@mutation.field("editScheduleTypeName")
async def resolve_edit_name(_root: Any, info: Any, id: str, name: str) -> ScheduleType:
    checked = _name(name)
    return await _edit(info, id, lambda item: setattr(item, "name", checked))


@mutation.field("editScheduleTypeColor")
async def resolve_edit_color(_root: Any, info: Any, id: str,
                             color: str | None = None) -> ScheduleType:
    return await _edit(info, id, lambda item: setattr(item, "color", color))


@mutation.field("editScheduleTypeCalendarStartTime")
async def resolve_edit_start(_root: Any, info: Any, id: str,
                             calendarStartTime: int) -> ScheduleType:
    return await _edit(info, id, lambda item: setattr(item, "calendar_start_ms",
                                                      calendarStartTime))


@mutation.field("editScheduleTypeLength")
async def resolve_edit_length(_root: Any, info: Any, id: str, length: int) -> ScheduleType:
    rules.check_length(length)
    return await _edit(info, id, lambda item: _set_days(item, rules.resized(days_of(item),
                                                                            length)))


@mutation.field("editScheduleTypeDayClear")
async def resolve_day_clear(_root: Any, info: Any, id: str, dayNumber: int) -> ScheduleType:
    return await _edit(info, id, lambda item: _edit_day(item, dayNumber,
                                                        lambda _day: rules.EMPTY_DAY))


def _duplicate_day(item: ScheduleType, day_number: int) -> None:
    days = days_of(item)
    rules.check_day_number(day_number, len(days))
    if len(days) >= rules.MAX_LENGTH:
        raise BadInput("dayNumber", f"the schedule already has {rules.MAX_LENGTH} days")
    days.insert(day_number + 1, days[day_number])
    _set_days(item, days)


@mutation.field("editScheduleTypeDayDuplicate")
async def resolve_day_duplicate(_root: Any, info: Any, id: str,
                                dayNumber: int) -> ScheduleType:
    return await _edit(info, id, lambda item: _duplicate_day(item, dayNumber))


@mutation.field("editScheduleTypeDayWfh")
async def resolve_day_wfh(_root: Any, info: Any, id: str, dayNumber: int,
                          wfh: bool) -> ScheduleType:
    return await _edit(info, id, lambda item: _edit_day(
        item, dayNumber, lambda day: rules.Day(day.duration, wfh, day.time_pairs)))


@mutation.field("editScheduleTypeDayTimePairs")
async def resolve_day_pairs(_root: Any, info: Any, id: str, dayNumber: int,
                            timePairs: list[list[int | None] | None]) -> ScheduleType:
    pairs = rules.check_time_pairs(timePairs)
    return await _edit(info, id, lambda item: _edit_day(
        item, dayNumber, lambda day: rules.with_time_pairs(day, pairs)))


@mutation.field("editScheduleTypeDayDuration")
async def resolve_day_duration(_root: Any, info: Any, id: str, dayNumber: int,
                               duration: int) -> ScheduleType:
    rules.check_duration(duration)
    return await _edit(info, id, lambda item: _edit_day(
        item, dayNumber, lambda day: rules.with_duration(day, duration)))


@mutation.field("editScheduleTypeAllWfh")
async def resolve_all_wfh(_root: Any, info: Any, id: str, wfh: bool) -> ScheduleType:
    return await _edit(info, id, lambda item: _set_days(
        item, [rules.Day(day.duration, wfh, day.time_pairs) for day in days_of(item)]))


@mutation.field("duplicateScheduleType")
async def resolve_duplicate(_root: Any, info: Any, id: str, name: str) -> ScheduleType:
    context: RequestContext = info.context
    _require_permission(context)
    source = await load(context, id)
    copy = ScheduleType(organisation_id=context.org_id, name=_name(name), color=source.color,
                        archived=False, calendar_start_ms=source.calendar_start_ms,
                        length=source.length, days=list(source.days or []))
    context.session.add(copy)
    await context.session.flush()
    return copy


@mutation.field("deleteScheduleType")
async def resolve_delete(_root: Any, info: Any, id: str) -> ScheduleType:
    """Deletes the type and its timeline entries (the days they covered fall back to the
    next entry in force)."""
    context: RequestContext = info.context
    _require_permission(context)
    item = await load(context, id, for_update=True)
    await context.session.execute(delete(ScheduleTimelineEntry).where(
        ScheduleTimelineEntry.organisation_id == context.org_id,
        ScheduleTimelineEntry.schedule_type_id == item.id))
    await context.session.delete(item)
    await context.session.flush()
    return item


async def _set_archived(info: Any, ids: Sequence[str], argument: str,
                        archived: bool) -> list[ScheduleType]:
    context: RequestContext = info.context
    _require_permission(context)
    items = await get_many_in_org(context.session, ScheduleType, context.org_id, list(ids),
                                  argument, "schedule type")
    for item in items:
        item.archived = archived
    await context.session.flush()
    return list(items)


@mutation.field("archiveScheduleType")
async def resolve_archive(_root: Any, info: Any, id: str) -> ScheduleType:
    return (await _set_archived(info, [id], "id", True))[0]


@mutation.field("archiveScheduleTypes")
async def resolve_archive_many(_root: Any, info: Any, ids: list[str]) -> list[ScheduleType]:
    return await _set_archived(info, ids, "ids", True)


@mutation.field("unarchiveScheduleType")
async def resolve_unarchive(_root: Any, info: Any, id: str) -> ScheduleType:
    return (await _set_archived(info, [id], "id", False))[0]


@mutation.field("unarchiveScheduleTypeCategories")
async def resolve_unarchive_many(_root: Any, info: Any, ids: list[str]) -> list[ScheduleType]:
    return await _set_archived(info, ids, "ids", False)


BINDABLES = [query, mutation, schedule_type]
