"""A task's planning row (service/plannings/task_plan_models.py): read for the task fields (every
plan of
the organisation in one statement, remembered until the session writes), made when an edit
first needs it; the end lock's check; the organisation's holidays for recurrence rules."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

from sqlalchemy import select

from service.errors import RuleViolation
from service.graphql.context import RequestContext
from service.models import Organisation, Task
from service.organisation import own_value
from service.plannings import holiday_rules as hol
from service.plannings.schedule_plan import PUBLIC_HOLIDAYS
from service.plannings.task_plan_models import TaskPlan
from service.read_memo import memo


async def plans(context: RequestContext) -> dict[str, TaskPlan]:
    """Every planning row of the organisation, by task id (read once per session's reads)."""
    remembered = memo(context.session)
    key = ("task_plans", context.org_id)
    if key not in remembered:
        rows = await context.session.scalars(
            select(TaskPlan).where(TaskPlan.organisation_id == context.org_id))
        remembered[key] = {row.task_id: row for row in rows}
    found: dict[str, TaskPlan] = remembered[key]
    return found


async def plan_of(context: RequestContext, task: Task) -> TaskPlan | None:
    return (await plans(context)).get(task.id)


async def plan_for_edit(context: RequestContext, task: Task) -> TaskPlan:
    """The task's planning row, made when it has none."""
    plan = await context.session.get(TaskPlan, task.id)
    if plan is None:
        plan = TaskPlan(organisation_id=context.org_id, task_id=task.id,
                        created_ms=context.now_ms)
        context.session.add(plan)
    return plan


async def check_end_unlocked(context: RequestContext, task: Task, end_ms: int | None) -> None:
    """Refuses moving the end of a task whose end is locked (editTaskEndLocked)."""
    if end_ms == task.end_ms:
        return
    plan = await context.session.get(TaskPlan, task.id)
    if plan is not None and plan.end_locked:
        raise RuleViolation(f'The end of task "{task.name}" is locked: unlock it with '
                            "editTaskEndLocked before moving it")


def holiday_test(organisation: Organisation) -> Callable[[date], bool]:
    """Whether a day is one of the organisation's public holidays (its own calendar)."""
    value = own_value(organisation, "organisations", PUBLIC_HOLIDAYS).value
    if not value:
        return lambda _day: False
    years: dict[int, set[date]] = {}

    def is_holiday(day: date) -> bool:
        if day.year not in years:
            years[day.year] = {h.date for h in hol.calendar_holidays(value, day.year)
                               if not h.disabled}
        return day in years[day.year]

    return is_holiday
