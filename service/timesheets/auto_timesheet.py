"""The automatic timesheet's suggested entries of a person from the database: their resolved
settings, the tasks they own, those tasks' status history, their schedule and what they
already recorded; the rule itself is pure (service/timesheets/auto_timesheet_rules.py)."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, date, datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from service.models import Organisation, Person, Task, TaskOwner, TaskStatusChange, TimeRecord
from service.organisation import person_zone, resolve
from service.plannings import plan_person
from service.timesheets import auto_timesheet_rules as rules


async def suggested_entries(session: AsyncSession, organisation: Organisation, person: Person,
                            start_ms: int, end_ms: int, now_ms: int) -> list[rules.Suggestion]:
    enabled = (await resolve(session, organisation, person, "enableAutoTimesheet")).value
    entries = (await resolve(session, organisation, person, "autoTimesheet")).value
    auto_rules = rules.rules_of(enabled, entries)
    if not auto_rules or min(end_ms, now_ms) <= start_ms:
        return []
    categories = {rule.category_id for rule in auto_rules}
    tasks = dict((await session.execute(
        select(Task.id, Task.category_id).join(TaskOwner, TaskOwner.task_id == Task.id).where(
            Task.organisation_id == organisation.id, Task.category_id.in_(categories),
            TaskOwner.person_id == person.id, TaskOwner.potential.is_(False)))).tuples().all())
    if not tasks:
        return []
    changes = [rules.StatusChange(*row) for row in (await session.execute(
        select(TaskStatusChange.task_id, TaskStatusChange.status_id, TaskStatusChange.at_ms)
        .where(TaskStatusChange.organisation_id == organisation.id,
               TaskStatusChange.task_id.in_(tasks), TaskStatusChange.at_ms < end_ms)
        .order_by(TaskStatusChange.at_ms, TaskStatusChange.id))).tuples()]
    zone = await person_zone(session, organisation, person)
    recorded: dict[tuple[str, date], int] = defaultdict(int)
    for task_id, at, duration in (await session.execute(
            select(TimeRecord.task_id, TimeRecord.start_ms, TimeRecord.duration_ms).where(
                TimeRecord.organisation_id == organisation.id,
                TimeRecord.person_id == person.id, TimeRecord.task_id.in_(tasks),
                TimeRecord.start_ms >= start_ms, TimeRecord.start_ms < end_ms))).tuples():
        day = datetime.fromtimestamp(at / 1000, UTC).astimezone(zone).date()
        recorded[(str(task_id), day)] += duration
    windows = rules.working_windows(
        await plan_person(session, organisation, person, start_ms, end_ms))
    return rules.suggestions(auto_rules, tasks, changes, windows, recorded,
                             start_ms, end_ms, now_ms)
