"""A person's planned days from the database: the timeline entries of the person, their tags
and the organisation, the schedule types they name, and the public holidays that apply; the
rules themselves are pure (service/plannings/schedule_rules.py,
service/plannings/holiday_rules.py)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import and_, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from plumbing.in_lists import in_lists
from service.access import person_tags
from service.errors import BadInput
from service.models import Organisation, Person, Project, Tag
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
from service.read_memo import memo

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
    tags = await _active_tags(session, organisation.id, person.id)
    rows = memo(session).get(_timeline_key(organisation.id, person.id))
    if rows is None:
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
    schedules = {item.id: to_schedule(item, zone) for item in await _schedule_types(
        session, organisation.id, {r.schedule_type_id for r in rows})}
    calendar = await resolve(session, organisation, person, PUBLIC_HOLIDAYS)
    years = range(days[0][0].year, days[-1][0].year + 1) if days else range(0)
    off = hol.days_off(calendar.value, years)
    return [rules.plan_day(day, midnight, levels, schedules, off) for day, midnight in days]


async def _active_tags(session: AsyncSession, org_id: str, person_id: str) -> list[Tag]:
    """The person's tags that are not archived, nearest level first (the cascade's order)."""
    tags = [t for t in await person_tags(session, org_id, person_id) if not t.archived]
    tags.sort(key=lambda t: (-t.level, t.name, t.id))
    return tags


def _timeline_key(org_id: str, person_id: str) -> tuple[str, str, str]:
    return ("schedule_timeline", org_id, person_id)


def _type_key(type_id: str) -> tuple[str, str]:
    return ("schedule_type", type_id)


async def _schedule_types(session: AsyncSession, org_id: str,
                          type_ids: Iterable[str]) -> list[ScheduleType]:
    """The schedule types of these ids, those remembered in the session's memo not read again."""
    remembered = memo(session)
    wanted = set(type_ids)
    found = [remembered[_type_key(i)] for i in wanted if _type_key(i) in remembered]
    missing = wanted - {item.id for item in found}
    for chunk in in_lists(missing):
        for item in await session.scalars(select(ScheduleType).where(
                ScheduleType.organisation_id == org_id, ScheduleType.id.in_(chunk))):
            remembered[_type_key(item.id)] = item
            found.append(item)
    return found


async def remember_timelines_of(session: AsyncSession, org_id: str,
                                person_ids: Iterable[str]) -> None:
    """Read the schedule timelines of many people (the entries of each person, of their tags and
    of the organisation) and the schedule types they name in a few statements, remembered in the
    session's memo for `plan_person`: a page of people whose planned days are asked costs a
    read a page, not one a person. (Their tags are best remembered first: `remember_tags_of`.)"""
    remembered = memo(session)
    wanted = [p for p in dict.fromkeys(person_ids) if _timeline_key(org_id, p) not in remembered]
    if not wanted:
        return
    tags = {p: await _active_tags(session, org_id, p) for p in wanted}
    entry = ScheduleTimelineEntry
    by_target: dict[tuple[str, str], list[ScheduleTimelineEntry]] = defaultdict(list)
    reads = [(TARGET_PERSON, wanted), (TARGET_TAG, [t.id for ts in tags.values() for t in ts])]
    for kind, targets in reads:
        for chunk in in_lists(targets):
            for row in await session.scalars(select(entry).where(
                    entry.organisation_id == org_id, entry.target_kind == kind,
                    entry.target_id.in_(chunk))):
                by_target[(kind, row.target_id)].append(row)
    everyone = list(await session.scalars(select(entry).where(
        entry.organisation_id == org_id, entry.target_kind == TARGET_ORGANISATION)))
    for person_id, person_tags_ in tags.items():
        remembered[_timeline_key(org_id, person_id)] = [
            *by_target[(TARGET_PERSON, person_id)],
            *(row for tag in person_tags_ for row in by_target[(TARGET_TAG, tag.id)]),
            *everyone]
    await _schedule_types(session, org_id, {row.schedule_type_id for rows in by_target.values()
                                            for row in rows} | {r.schedule_type_id
                                                                for r in everyone})


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
