"""A person's planned days from the database: the timeline entries of the person, their tags
and the organisation, the schedule types they name, and the public holidays that apply; the
rules themselves are pure (service/plannings/schedule_rules.py,
service/plannings/holiday_rules.py)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import and_, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from service.access import person_tags
from service.errors import BadInput
from service.models import Organisation, Person, Project
from service.organisation import person_zone, resolve
from service.plannings import holiday_rules as hol
from service.plannings import schedule_rules as rules
from service.plannings.models import (
    TARGET_ORGANISATION,
    TARGET_PERSON,
    TARGET_TAG,
    ScheduleTimelineEntry,
    ScheduleType,
)

PUBLIC_HOLIDAYS = "publicHolidays"
MAX_DAYS = 366


def local_days(start_ms: int, end_ms: int, zone: ZoneInfo) -> list[tuple[date, int]]:
    """(local date, its midnight in ms) of each local day that starts in [start, end)."""
    if end_ms <= start_ms:
        raise BadInput("endTime", "must be after startTime")
    day = datetime.fromtimestamp(start_ms / 1000, UTC).astimezone(zone).date()
    found: list[tuple[date, int]] = []
    while True:
        midnight = int(datetime(day.year, day.month, day.day, tzinfo=zone).timestamp() * 1000)
        if midnight >= end_ms:
            return found
        if midnight >= start_ms:
            found.append((day, midnight))
            if len(found) > MAX_DAYS:
                raise BadInput("endTime", f"the period may hold at most {MAX_DAYS} days")
        day += timedelta(days=1)


def to_schedule(item: ScheduleType, zone: ZoneInfo) -> rules.Schedule:
    start = datetime.fromtimestamp(item.calendar_start_ms / 1000, UTC).astimezone(zone).date()
    return rules.Schedule(item.id, start, tuple(rules.days_from_json(item.days, item.length)))


async def plan_person(
    session: AsyncSession, organisation: Organisation, person: Person,
    start_ms: int, end_ms: int,
) -> list[rules.PlannedDay]:
    zone = await person_zone(session, organisation, person)
    days = local_days(start_ms, end_ms, zone)
    tags = [t for t in await person_tags(session, organisation.id, person.id)
            if not t.archived]
    tags.sort(key=lambda t: (-t.level, t.name, t.id))
    rows = list(await session.scalars(select(ScheduleTimelineEntry).where(
        ScheduleTimelineEntry.organisation_id == organisation.id,
        or_(
            and_(ScheduleTimelineEntry.target_kind == TARGET_PERSON,
                 ScheduleTimelineEntry.target_id == person.id),
            and_(ScheduleTimelineEntry.target_kind == TARGET_TAG,
                 ScheduleTimelineEntry.target_id.in_([t.id for t in tags])),
            ScheduleTimelineEntry.target_kind == TARGET_ORGANISATION,
        ),
    )))

    def level(kind: str, target: str) -> list[rules.Entry]:
        return [rules.Entry(r.schedule_type_id, r.start_ms) for r in rows
                if r.target_kind == kind and (kind == TARGET_ORGANISATION or r.target_id == target)]

    levels = [level(TARGET_PERSON, person.id)]
    levels += [level(TARGET_TAG, tag.id) for tag in tags]
    levels.append(level(TARGET_ORGANISATION, organisation.id))
    type_ids = {r.schedule_type_id for r in rows}
    schedules = {
        item.id: to_schedule(item, zone)
        for item in await session.scalars(select(ScheduleType).where(
            ScheduleType.organisation_id == organisation.id, ScheduleType.id.in_(type_ids)))
    } if type_ids else {}
    calendar = await resolve(session, organisation, person, PUBLIC_HOLIDAYS)
    years = range(days[0][0].year, days[-1][0].year + 1) if days else range(0)
    off = hol.days_off(calendar.value, years)
    return [rules.plan_day(day, midnight, levels, schedules, off) for day, midnight in days]


ALLOW_OUT_OF_SCHEDULE = "allowTimeRecordOutOfScheduleDaily"


async def _projects_allow(session: AsyncSession, projects: Sequence[Project]) -> bool | None:
    """The projects' own say (each project's value, else its nearest ancestor's): None when no
    project has one, False when any refuses."""
    values: list[Any] = []
    for project in projects:
        current: Project | None = project
        while current is not None:
            if ALLOW_OUT_OF_SCHEDULE in (current.settings or {}):
                values.append(current.settings[ALLOW_OUT_OF_SCHEDULE])
                break
            parent = current.parent_id
            current = await session.get(Project, parent) if parent is not None else None
    if not values:
        return None
    return all(value is not False for value in values)


async def out_of_schedule_allowed(
    session: AsyncSession, organisation: Organisation, person: Person,
    projects: Sequence[Project] = (),
) -> bool:
    """allowTimeRecordOutOfScheduleDaily as it applies to an entry: a project's explicit
    setting wins over the person's (person, tag, account)."""
    allowed = await _projects_allow(session, projects)
    if allowed is None:
        setting = await resolve(session, organisation, person, ALLOW_OUT_OF_SCHEDULE)
        allowed = setting.value is not False
    return allowed


async def planned_day(
    session: AsyncSession, organisation: Organisation, person: Person, start_ms: int,
) -> rules.PlannedDay:
    """The person's planned day (schedule and public holidays) that `start_ms` is in."""
    zone = await person_zone(session, organisation, person)
    day = datetime.fromtimestamp(start_ms / 1000, UTC).astimezone(zone).date()
    midnight = int(datetime(day.year, day.month, day.day, tzinfo=zone).timestamp() * 1000)
    return (await plan_person(session, organisation, person, midnight, midnight + 1))[0]
