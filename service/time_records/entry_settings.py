"""The account settings that shape time entry, applied to one write: the adapter of the pure
rule table `service/time_records/entry_rules.py`. For an entry a setting's value is a project's own
(the
first of the entry's projects that sets it), else the owner's (person > deepest tag > account
> default: `settings_cascade.py`).

`checked` is the one place the entry rules meet a write: addTimeRecord, every
editTimeRecord…, deleteTimeRecords, cloneTimeRecords, the legacy interface's time entries and
submitTimesheet (its period's records as they stand) describe their write as a `Write` and get
back the entry as it may be stored (its duration rounded to `timeEntryUnit`), or a
RuleViolation whose message names the setting that refused and what would be accepted.
Settings are read from the JSON already loaded with the organisation, the person, their tags
and the projects; the planned day (schedules and holidays) is read only when a schedule rule
is on, the category names only for a refusal that shows them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from service.calendar_periods import period_around
from service.errors import RuleViolation
from service.models import (
    Organisation,
    Person,
    Project,
    ProjectCategory,
    Task,
    TaskCategory,
    TimeRecord,
)
from service.organisation import (
    BY_NAME,
    TIME_SETTINGS,
    Resolved,
    for_person,
    own,
    person_zone,
    reader,
)
from service.plannings import expected_ms, out_of_schedule_allowed, plan_person, planned_day
from service.time_records import entry_rules as rules
from service.time_records.entry_rules import Entry, Facts, Period, ProjectFact, Write
from service.timesheets import check_period_open

__all__ = ["Entry", "Write", "checked", "entry_value", "record_entry"]


async def entry_value(session: AsyncSession, organisation: Organisation, person: Person,
                      projects: Sequence[Project], name: str) -> Resolved:
    setting = BY_NAME[(TIME_SETTINGS, name)]
    read = reader(setting)
    for project in projects:
        found = own(project, "project", read)
        if found is not None:
            return found
    return await for_person(session, organisation, person, read, setting.default, setting.ties)


def project_facts(projects: Iterable[Project]) -> tuple[ProjectFact, ...]:
    return tuple(ProjectFact(p.name, p.category_id) for p in projects)


def record_entry(record: TimeRecord, *, task: Task | None = None,
                 projects: Sequence[Project] | None = None, **changes: Any) -> Entry:
    """The record as a write of `changes` (start_ms, end_ms, duration_ms, absence, comment)
    leaves it; `task` / `projects` when the write names them (or the record's own are read)."""
    values: dict[str, Any] = {
        "start_ms": record.start_ms, "duration_ms": record.duration_ms,
        "end_ms": record.end_ms, "absence": record.absence_id is not None,
        "comment": record.comment, "has_task": record.task_id is not None,
        "task_category": task.category_id if task is not None else None,
        "projects": project_facts(record.projects if projects is None else projects),
    }
    if task is not None:
        values["has_task"] = True
    values.update(changes)
    return Entry(**values)


async def _names(session: AsyncSession, org_id: str, values: rules.Values) -> dict[str, str]:
    ids: set[str] = set(values["taskCategories"].value or []) if "taskCategories" in values \
        else set()
    if "listOfProjectCategories" in values:
        ids |= {c for level in values["listOfProjectCategories"].value or [] for c in level or []}
    found: dict[str, str] = {}
    for model in (TaskCategory, ProjectCategory):
        rows = await session.execute(select(model.id, model.name).where(
            model.organisation_id == org_id, model.id.in_(ids)))
        found.update({row[0]: row[1] for row in rows})
    return found


async def checked(session: AsyncSession, organisation: Organisation, person: Person,
                  projects: Sequence[Project], write: Write, *, now_ms: int,
                  admin: bool) -> Entry:
    """The entry as the write may store it, or RuleViolation naming the setting that refuses."""
    applying = rules.applying(write)
    names = {name for rule in applying for name in rule.settings}
    if rules.TIMED & write.fields:
        names.add("timeEntryUnit")
    values = {name: await entry_value(session, organisation, person, projects, name)
              for name in sorted(names)}
    facts = Facts(now_ms, admin)
    if any("day" in rule.facts for rule in applying):
        allowed = True
        if not write.after.absence and "allowTimeRecordOutOfScheduleDaily" in values:
            allowed = await out_of_schedule_allowed(session, organisation, person, projects)
        if values["timeRecordOnWorkingDayOnly"].value or not allowed:
            day = await planned_day(session, organisation, person, write.after.start_ms)
            facts = replace(facts, day=day, out_of_schedule=allowed)
    if any("period" in rule.facts for rule in applying) and not write.after.absence and \
            values["allowTimeRecordOutOfSchedulePeriod"].value is False:
        facts = replace(facts, period=await _period(session, organisation, person, write,
                                                    values["periodicity"].value))
    refused = rules.refusal(values, write, facts)
    if refused is not None and any("names" in rule.facts for rule in applying):
        facts = replace(facts, names=await _names(session, organisation.id, values))
        refused = rules.refusal(values, write, facts)
    if refused is not None:
        raise RuleViolation(refused)
    if write.kind in ("add", "clone", "legacy", "edit"):
        await check_period_open(session, organisation, person, write.after.start_ms, now_ms,
                                projects)
    unit = values.get("timeEntryUnit")
    return rules.rounded(unit.value if unit is not None else None, write.after)


# The timesheet periods (the periodicity setting) as report periods.
_PERIODS = {"daily": "day", "weekly": "week", "biWeekly": "biWeekly",
            "semiMonthly": "semiMonth", "monthly": "month"}


async def _period(session: AsyncSession, organisation: Organisation, person: Person,
                  write: Write, periodicity: str | None) -> Period:
    """The period of the entry's start: its scheduled time, and the time of the person's
    other records in it."""
    zone = await person_zone(session, organisation, person)
    day = datetime.fromtimestamp(write.after.start_ms / 1000, UTC).astimezone(zone).date()
    first, after = period_around(_PERIODS.get(periodicity or "weekly", "week"), day)

    def midnight(on: date) -> int:
        return int(datetime(on.year, on.month, on.day, tzinfo=zone).timestamp() * 1000)

    start_ms, end_ms = midnight(first), midnight(after)
    planned = await plan_person(session, organisation, person, start_ms, end_ms)
    others = select(func.coalesce(func.sum(TimeRecord.duration_ms), 0)).where(
        TimeRecord.organisation_id == organisation.id, TimeRecord.person_id == person.id,
        TimeRecord.start_ms >= start_ms, TimeRecord.start_ms < end_ms)
    if write.record_id is not None:
        others = others.where(TimeRecord.id != write.record_id)
    recorded = int(await session.scalar(others) or 0)
    return Period(first, after - timedelta(days=1), expected_ms(planned), recorded)


async def check_records(session: AsyncSession, organisation: Organisation, person: Person,
                        records: Iterable[TimeRecord], *, kind: str, now_ms: int,
                        admin: bool) -> None:
    """Each record as it stands passes the rules of a `kind` write (a submission, a
    deletion)."""
    fields = frozenset({rules.ANY, rules.COMMENT, rules.END})
    for record in records:
        entry = record_entry(record)
        await checked(session, organisation, person, record.projects,
                      Write(kind, entry, fields, entry), now_ms=now_ms, admin=admin)


async def check_submission(session: AsyncSession, organisation: Organisation, owner: Person,
                           start_ms: int, end_ms: int, *, now_ms: int, admin: bool
                           ) -> list[TimeRecord]:
    """submitTimesheet: the period's records as they stand pass the rules that hold for a
    record at rest (forceComment, mandatoryStartEndTime; not lockDate: it records nothing).
    Returns them (every record of the period, by start), for the submission's content."""
    records = list((await session.scalars(select(TimeRecord).where(
        TimeRecord.organisation_id == organisation.id, TimeRecord.person_id == owner.id,
        TimeRecord.start_ms >= start_ms, TimeRecord.start_ms < end_ms,
    ).order_by(TimeRecord.start_ms, TimeRecord.id))).unique())
    await check_records(session, organisation, owner, records, kind="submit",
                        now_ms=now_ms, admin=admin)
    return records
