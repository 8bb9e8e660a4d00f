"""Recurrent tasks: a task with a rule is a series (its dates:
service/projects/recurrence_rules.py).
Its occurrences are numbered from 0 (the task itself); one may be skipped (and unskipped),
materialised as a task of its own (`seriesId`, `seriesIndex`; the series' own occurrence is
then that task), or the series split at one (the first part ends before it, a new series
starts with it, taking the later skipped and materialised occurrences along, renumbered).
`deleteRecurrentTask` deletes one task of a series (`thisSourceOnly`: a materialised occurrence
deleted stays skipped) or every task of it (`entireSeries`: every series split from the same
root and their materialised occurrences). Editing needs the Tasks permission."""

from __future__ import annotations

from typing import Any

from ariadne import MutationType, ObjectType
from sqlalchemy import delete, func, or_, select

from service.access import TASKS, requirer
from service.errors import BadInput, RuleViolation
from service.graphql.context import RequestContext
from service.lookup import by_id
from service.models import Budget, Task, TaskDependency, TaskOwner, TaskPlan, TimeRecord
from service.plannings import holiday_test, plan_for_edit, plan_of, plans
from service.projects import recurrence_rules as rules
from service.projects.task_statuses import check_capacity, next_position
from service.rates import organisation_zone
from service.value_words import choice_problem

require_permission = requirer(TASKS)

mutation = MutationType()
task_type = ObjectType("SvcTask")


def _plan_field(read: Any) -> Any:
    async def resolve(task: Task, info: Any) -> Any:
        plan = await plan_of(info.context, task)
        return None if plan is None else read(plan)

    return resolve


for _field, _read in {
    "recurrence": lambda p: p.recurrence,
    "skippedOccurrences": lambda p: sorted(p.skipped) if p.recurrence is not None else None,
    "lastMaterializedIndex": lambda p: p.last_materialized_index,
    "seriesId": lambda p: p.series_id,
    "seriesIndex": lambda p: p.series_index,
    "rootSeriesId": lambda p: p.root_series_id,
}.items():
    task_type.set_field(_field, _plan_field(_read))


async def _series(context: RequestContext, task_id: str) -> tuple[Task, TaskPlan]:
    require_permission(context)
    task = await by_id(context, Task, task_id)
    plan = await plan_of(context, task)
    if plan is None or plan.recurrence is None:
        raise BadInput("id", f'task "{task.name}" is not recurrent: give it a rule with '
                       "editTaskRecurrence")
    return task, plan


def _start(context: RequestContext, task: Task, plan: TaskPlan, index: int) -> int:
    """Start of occurrence `index` (>= 1) of the series, or BadInput naming occurrenceIndex."""
    if index < 1:
        raise BadInput("occurrenceIndex", "occurrence 0 is the series' task itself; "
                       "the others are numbered from 1")
    assert plan.recurrence is not None and task.start_ms is not None
    start = rules.occurrence_start(plan.recurrence, task.start_ms,
                                   organisation_zone(context.organisation), index,
                                   holiday_test(context.organisation))
    if start is None:
        raise BadInput("occurrenceIndex", f'the series of task "{task.name}" has no occurrence '
                       f"{index}: it ends before")
    return start


async def _materialised(context: RequestContext, series: Task) -> dict[int, str]:
    """Index -> task id of the series' materialised occurrences."""
    return {p.series_index: p.task_id for p in (await plans(context)).values()
            if p.series_id == series.id and p.recurrence is None and p.series_index is not None}


async def _free_occurrence(context: RequestContext, task: Task, plan: TaskPlan,
                           index: int) -> int:
    start = _start(context, task, plan, index)
    if index in (plan.skipped or []):
        raise BadInput("occurrenceIndex", f"occurrence {index} is skipped: unskip it first")
    made = (await _materialised(context, task)).get(index)
    if made is not None:
        raise BadInput("occurrenceIndex", f"occurrence {index} is already materialised as task "
                       f"{made}")
    return start


@mutation.field("editTaskRecurrence")
async def resolve_edit_recurrence(_root: Any, info: Any, id: str,
                                  recurrence: dict[str, Any] | None = None) -> Task:
    """Sets the task's rule (null: the task no longer recurs; its skipped occurrences go)."""
    context: RequestContext = info.context
    require_permission(context)
    task = await by_id(context, Task, id)
    plan = await plan_for_edit(context, task)
    if plan.series_id is not None and plan.recurrence is None:
        raise BadInput("id", f'task "{task.name}" is occurrence {plan.series_index} of series '
                       f"{plan.series_id}: edit the series' rule")
    if recurrence is None:
        plan.recurrence, plan.skipped = None, None
        return task
    if task.start_ms is None:
        raise BadInput("id", f'task "{task.name}" has no start time: a series starts with the '
                       "task's own period (editTaskStartTime)")
    try:
        rule = rules.check_rule(recurrence)
    except rules.RuleProblem as problem:
        raise BadInput(f"recurrence.{problem.field}", problem.message) from None
    if rule["endTime"] is not None and rule["endTime"] < task.start_ms:
        raise BadInput("recurrence.endTime", "is before the task's start")
    plan.recurrence, plan.skipped = rule, list(plan.skipped or [])
    return task


def _bind_skip(operation: str, skip: bool) -> None:
    async def resolve(_root: Any, info: Any, id: str, occurrenceIndex: int) -> Task:
        context: RequestContext = info.context
        task, plan = await _series(context, id)
        skipped = set(plan.skipped or [])
        if skip:
            await _free_occurrence(context, task, plan, occurrenceIndex)
            skipped.add(occurrenceIndex)
        else:
            if occurrenceIndex not in skipped:
                raise BadInput("occurrenceIndex", f"occurrence {occurrenceIndex} is not skipped")
            skipped.discard(occurrenceIndex)
        plan.skipped = sorted(skipped)
        return task

    mutation.set_field(operation, resolve)


_bind_skip("skipTaskOccurrence", True)
_bind_skip("unskipTaskOccurrence", False)


async def _copy(context: RequestContext, task: Task, start_ms: int | None, end_ms: int | None,
                name: str | None = None) -> Task:
    """A new task like `task` (category, status, parent, project, colour, effort, owners)."""
    session = context.session
    if task.status is not None and not task.archived:
        await check_capacity(session, task.status, 1)
    copy = Task(
        organisation_id=context.org_id, name=name or task.name, category_id=task.category_id,
        status_id=task.status_id, parent_id=task.parent_id, project_id=task.project_id,
        level=task.level, color=task.color, start_ms=start_ms, end_ms=end_ms,
        effort=task.effort, archived=task.archived, created_ms=context.now_ms,
        position=await next_position(session, task.status_id) if task.status_id else 0,
    )
    session.add(copy)
    await session.flush()
    for owner in await session.scalars(select(TaskOwner).where(TaskOwner.task_id == task.id)):
        session.add(TaskOwner(organisation_id=context.org_id, task_id=copy.id,
                              person_id=owner.person_id, potential=owner.potential,
                              fte_pct=owner.fte_pct))
    await session.flush()
    await session.refresh(copy, ["category", "status"])
    return copy


def _end(task: Task, start_ms: int, end_ms: int | None, argument: str = "endTime") -> int | None:
    if end_ms is None:
        if task.end_ms is None or task.start_ms is None:
            return None
        end_ms = start_ms + (task.end_ms - task.start_ms)
    if end_ms < start_ms:
        raise BadInput(argument, "is before the occurrence's start")
    return end_ms


@mutation.field("materializeTaskOccurrence")
async def resolve_materialize(_root: Any, info: Any, id: str, occurrenceIndex: int,
                              startTime: int | None = None, endTime: int | None = None,
                              name: str | None = None) -> Task:
    """The occurrence as a task of its own (dates: the occurrence's unless given)."""
    context: RequestContext = info.context
    task, plan = await _series(context, id)
    start = await _free_occurrence(context, task, plan, occurrenceIndex)
    start = start if startTime is None else startTime
    made = await _copy(context, task, start, _end(task, start, endTime), name)
    made_plan = await plan_for_edit(context, made)
    made_plan.series_id, made_plan.series_index = task.id, occurrenceIndex
    made_plan.root_series_id = plan.root_series_id or task.id
    plan.last_materialized_index = max(plan.last_materialized_index or 0, occurrenceIndex)
    return made


@mutation.field("splitRecurrenceSeries")
async def resolve_split(_root: Any, info: Any, id: str, occurrenceIndex: int,
                        occurrenceStartTime: int, startTime: int | None = None,
                        endTime: int | None = None) -> Task:
    """Ends the series before the occurrence and starts a new one with it (returned)."""
    context: RequestContext = info.context
    task, plan = await _series(context, id)
    expected = _start(context, task, plan, occurrenceIndex)
    if occurrenceStartTime != expected:
        raise BadInput("occurrenceStartTime", f"occurrence {occurrenceIndex} starts at "
                       f"{expected}, not {occurrenceStartTime}")
    assert plan.recurrence is not None
    first, second = rules.split_rules(plan.recurrence, occurrenceIndex)
    start = expected if startTime is None else startTime
    made = await _copy(context, task, start, _end(task, start, endTime))
    made_plan = await plan_for_edit(context, made)
    made_plan.recurrence = second
    made_plan.skipped = [i - occurrenceIndex for i in plan.skipped or [] if i > occurrenceIndex]
    made_plan.series_id, made_plan.series_index = task.id, occurrenceIndex
    made_plan.root_series_id = plan.root_series_id or task.id
    later: list[int] = []
    for index, task_id in (await _materialised(context, task)).items():
        if index >= occurrenceIndex:
            moved = await context.session.get(TaskPlan, task_id)
            assert moved is not None
            moved.series_id, moved.series_index = made.id, index - occurrenceIndex
            later.append(index - occurrenceIndex)
    made_plan.last_materialized_index = max(later, default=None)
    plan.recurrence = first
    plan.skipped = [i for i in plan.skipped or [] if i < occurrenceIndex]
    earlier = [i for i in (await _materialised(context, task)) if i < occurrenceIndex]
    plan.last_materialized_index = max(earlier, default=None)
    return made


async def _delete_tasks(context: RequestContext, tasks: list[Task]) -> None:
    """Deletes the tasks, refused (naming the task) while time is recorded on one or it has a
    subtask outside them, as deleteTask is."""
    session = context.session
    ids = [t.id for t in tasks]
    for task in tasks:
        records = await session.scalar(
            select(func.count()).select_from(TimeRecord).where(TimeRecord.task_id == task.id))
        children = await session.scalar(select(func.count()).select_from(Task).where(
            Task.parent_id == task.id, Task.id.not_in(ids)))
        if records or children:
            used = [f"{n} {what}{'s' if n != 1 else ''}" for n, what in
                    ((records, "time record"), (children, "subtask")) if n]
            raise RuleViolation(f'Task "{task.name}" ({task.id}) cannot be deleted: it is used '
                                f"by {', '.join(used)}")
    await session.execute(delete(TaskOwner).where(TaskOwner.task_id.in_(ids)))
    await session.execute(delete(TaskDependency).where(or_(
        TaskDependency.task_id.in_(ids), TaskDependency.depends_on_id.in_(ids))))
    await session.execute(delete(Budget).where(Budget.task_id.in_(ids)))
    await session.execute(delete(TaskPlan).where(TaskPlan.task_id.in_(ids)))
    for task in tasks:
        await session.delete(task)


@mutation.field("deleteRecurrentTask")
async def resolve_delete_recurrent(_root: Any, info: Any, id: str, scope: str) -> Task:
    context: RequestContext = info.context
    require_permission(context)
    if scope not in rules.DELETE_SCOPES:
        raise BadInput("scope", choice_problem(rules.DELETE_SCOPES, scope))
    task = await by_id(context, Task, id)
    all_plans = await plans(context)
    plan = all_plans.get(task.id)
    if plan is None or (plan.recurrence is None and plan.series_id is None):
        raise BadInput("id", f'task "{task.name}" is not part of a recurrent series: delete '
                       "it with deleteTask")
    if scope == "thisSourceOnly":
        series = all_plans.get(plan.series_id or "")
        if plan.recurrence is None and series is not None and plan.series_index is not None:
            series.skipped = sorted({*(series.skipped or []), plan.series_index})
        for other in all_plans.values():  # its own materialised occurrences stay, unlinked
            if other.series_id == task.id and other.recurrence is None:
                other.series_id = other.series_index = None
        await _delete_tasks(context, [task])
        return task
    root = plan.root_series_id or task.id
    ids = {root, *(p.task_id for p in all_plans.values() if p.root_series_id == root)}
    doomed = list(await context.session.scalars(select(Task).where(
        Task.organisation_id == context.org_id, Task.id.in_(ids))))
    await _delete_tasks(context, doomed)
    return task


BINDABLES = [mutation, task_type]
