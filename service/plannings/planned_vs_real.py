"""getPlannedVsRealReport's work: for the tasks in scope (active tasks, of a task category when
one is named, narrowed by the filters), the hours planned on them and the hours recorded on
them, period by period over [startTime, endTime), and the steps of their budgets.

- periods: the starts (ms) of the days, weeks (from Monday) or months (`periodSplit`, default
  week) in the organisation's time zone; the first is the one holding startTime.
- planned: a task's effort spread evenly over its period [start, end) (a task without both
  ends or without effort plans nothing), the share inside each report period.
- real: the time records (not absences) on the tasks, by their start, over the records the
  caller may see.
- budgetSteps: the running total of the tasks' budget quantities (hours): a budget made inside
  the report's span steps in when it was made, any other (budgets have no date of their own)
  holds from startTime.

Filters (AND): taskIds, notTaskIds, projectIds, notProjectIds (a task planned on one of them
or a subproject), personId, notPersonId (the records' person); other fields are refused by
name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import select

from service.errors import BadInput
from service.graphql.context import RequestContext
from service.lookup import by_id
from service.models import Budget, Project, Task, TaskCategory, TimeRecord
from service.rates import organisation_zone
from service.structure import descendants, parent_map
from service.value_words import choice_problem

SPLITS = ("day", "week", "month")
MAX_PERIODS = 1000
MS_PER_HOUR = 3_600_000
_TASK_KEYS = ("taskIds", "notTaskIds", "projectIds", "notProjectIds")
_RECORD_KEYS = ("personId", "notPersonId")


def period_starts(start_ms: int, end_ms: int, split: str, zone: ZoneInfo) -> list[int]:
    """Starts of the periods covering [start_ms, end_ms), the first holding start_ms."""
    day = datetime.fromtimestamp(start_ms / 1000, zone).date()
    if split == "week":
        day -= timedelta(days=day.weekday())
    elif split == "month":
        day = day.replace(day=1)
    starts: list[int] = []
    while True:
        ms = int(datetime.combine(day, datetime.min.time(), zone).timestamp() * 1000)
        if ms >= end_ms:
            return starts
        if len(starts) >= MAX_PERIODS:
            raise BadInput("endTime", f"the report would have more than {MAX_PERIODS} "
                           f"periods: choose a longer periodSplit or a shorter span")
        starts.append(ms)
        if split == "day":
            day += timedelta(days=1)
        elif split == "week":
            day += timedelta(days=7)
        else:
            day = (day.replace(day=28) + timedelta(days=4)).replace(day=1)


def spread(starts: Sequence[int], end_ms: int, from_ms: int, to_ms: int,
           amount: float) -> list[float]:
    """`amount` spread evenly over [from_ms, to_ms): the share inside each period."""
    bounds = [*starts[1:], end_ms]
    span = to_ms - from_ms
    if span <= 0:
        return [amount if start <= from_ms < bound else 0.0
                for start, bound in zip(starts, bounds, strict=True)]
    return [amount * max(0, min(bound, to_ms) - max(start, from_ms)) / span
            for start, bound in zip(starts, bounds, strict=True)]


def bucket(starts: Sequence[int], ms: int) -> int | None:
    """Index of the period holding `ms` (None: before the first)."""
    found = None
    for index, start in enumerate(starts):
        if start <= ms:
            found = index
    return found


def _filters(filters: Sequence[Mapping[str, Any] | None]) -> dict[str, set[str]]:
    wanted: dict[str, set[str]] = {}
    for index, item in enumerate(filters):
        if item is None:
            raise BadInput(f"filters[{index}]", "must be an object, not null")
        for key, value in item.items():
            if value is None:
                continue
            if key not in _TASK_KEYS + _RECORD_KEYS:
                raise BadInput(f"filters[{index}].{key}", "is not supported by this report "
                               f"(supported: {', '.join(_TASK_KEYS + _RECORD_KEYS)})")
            values = value if isinstance(value, list) else [value]
            wanted.setdefault(key, set()).update(v for v in values if v)
    return wanted


async def planned_vs_real(context: RequestContext, args: Mapping[str, Any]) -> dict[str, Any]:
    start_ms, end_ms = int(args["startTime"]), int(args["endTime"])
    if end_ms <= start_ms:
        raise BadInput("endTime", "must be after startTime")
    split = args.get("periodSplit") or "week"
    if split not in SPLITS:
        raise BadInput("periodSplit", choice_problem(SPLITS, split))
    wanted = _filters(args.get("filters") or [])
    session = context.session
    starts = period_starts(start_ms, end_ms, split, organisation_zone(context.organisation))

    statement = select(Task).where(Task.organisation_id == context.org_id,
                                   Task.archived.is_(False))
    if args.get("taskCategoryId") is not None:
        category = await by_id(context, TaskCategory, args["taskCategoryId"], "taskCategoryId")
        statement = statement.where(Task.category_id == category.id)
    if "taskIds" in wanted:
        statement = statement.where(Task.id.in_(wanted["taskIds"]))
    if "notTaskIds" in wanted:
        statement = statement.where(Task.id.not_in(wanted["notTaskIds"]))
    if "projectIds" in wanted or "notProjectIds" in wanted:
        parents = await parent_map(session, Project, context.org_id)

        def subtree(key: str) -> list[str]:
            roots = wanted.get(key, set())
            return [*roots, *descendants(parents, roots)]

        if "projectIds" in wanted:
            statement = statement.where(Task.project_id.in_(subtree("projectIds")))
        if "notProjectIds" in wanted:
            statement = statement.where(Task.project_id.is_(None)
                                        | Task.project_id.not_in(subtree("notProjectIds")))
    tasks = list((await session.scalars(statement)).unique())
    task_ids = [t.id for t in tasks]

    planned = [0.0] * len(starts)
    for task in tasks:
        if task.effort and task.start_ms is not None and task.end_ms is not None:
            shares = spread(starts, end_ms, task.start_ms, task.end_ms, task.effort / 60)
            planned = [a + b for a, b in zip(planned, shares, strict=True)]

    real = [0.0] * len(starts)
    records = select(TimeRecord.start_ms, TimeRecord.duration_ms).where(
        TimeRecord.organisation_id == context.org_id, TimeRecord.absence_id.is_(None),
        TimeRecord.task_id.in_(task_ids), TimeRecord.start_ms >= start_ms,
        TimeRecord.start_ms < end_ms)
    visible = await context.visible_person_ids()
    if visible is not None:
        records = records.where(TimeRecord.person_id.in_(visible))
    if "personId" in wanted:
        records = records.where(TimeRecord.person_id.in_(wanted["personId"]))
    if "notPersonId" in wanted:
        records = records.where(TimeRecord.person_id.not_in(wanted["notPersonId"]))
    for record_start, duration in await session.execute(records):
        index = bucket(starts, record_start)
        if index is not None:
            real[index] += duration / MS_PER_HOUR

    steps: list[dict[str, float]] = []
    dated: list[tuple[int, str, int]] = []
    total = 0.0
    for budget in await session.scalars(
            select(Budget).where(Budget.organisation_id == context.org_id,
                                 Budget.task_id.in_(task_ids))):
        inside = start_ms < budget.created_ms < end_ms
        dated.append((budget.created_ms if inside else start_ms, budget.id, budget.quantity))
    for ts_ms, _id, quantity in sorted(dated):
        total += quantity
        ts = float(ts_ms)
        if steps and steps[-1]["ts"] == ts:
            steps[-1]["quantity"] = total
        else:
            steps.append({"ts": ts, "quantity": total})
    return {"periods": [float(s) for s in starts], "planned": [round(p, 6) for p in planned],
            "real": [round(r, 6) for r in real], "budgetSteps": steps}
