"""A task's planning: its owner's full-time percentage (`ftePct`), its end lock, the order of
siblings (a task's children, a category's top-level tasks, a status's tasks: one table,
ORDERINGS), and the start of a tag assignment (`editAssignmentStartTime`, over the tables of
ASSIGNMENTS). Everyone reads tasks; editing needs the Tasks permission (tags: Tags)."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from ariadne import MutationType, ObjectType
from sqlalchemy import ColumnElement, select

from service.access import TAGS, TASKS, requirer
from service.errors import BadInput, NotFound, RuleViolation
from service.graphql.context import RequestContext
from service.lookup import by_id
from service.models import Person, PersonTag, ProjectTag, Task, TaskCategory, TaskOwner, TaskStatus
from service.plannings.task_plan_models import TaskPlan
from service.plannings.task_plans import plan_for_edit, plan_of
from service.structure import check_unique_ids, raw_relation
from service.value_words import described

require_tasks = requirer(TASKS)
require_tags = requirer(TAGS)

mutation = MutationType()
task_type = ObjectType("SvcTask")


async def _owner(context: RequestContext, task: Task) -> TaskOwner | None:
    return (await context.session.scalars(select(TaskOwner).where(
        TaskOwner.task_id == task.id, TaskOwner.potential.is_(False)))).first()


@mutation.field("editTaskFtePct")
async def resolve_edit_fte_pct(_root: Any, info: Any, id: str,
                               pct: float | None = None) -> Task:
    """The planned full-time percentage of the task's owner (null clears it)."""
    context: RequestContext = info.context
    require_tasks(context)
    task = await by_id(context, Task, id)
    if pct is not None and (not math.isfinite(pct) or not 0 < pct <= 100):
        raise BadInput("pct", f"must be a percentage above 0 and at most 100, got {described(pct)}")
    owner = await _owner(context, task)
    if owner is None:
        raise RuleViolation(f'Task "{task.name}" has no owner: assign one with '
                            "assignOwnerOfTask before planning their full-time percentage")
    owner.fte_pct = pct
    return task


@task_type.field("ftePct")
async def resolve_fte_pct(task: Task, info: Any) -> dict[str, Any] | None:
    owner = await _owner(info.context, task)
    if owner is None or owner.fte_pct is None:
        return None
    person = await info.context.session.get(Person, owner.person_id)
    return {"value": owner.fte_pct,
            "path": [{"id": person.id, "collection": "persons", "name": person.name}]}


@mutation.field("editTaskEndLocked")
async def resolve_edit_end_locked(_root: Any, info: Any, id: str,
                                  endLocked: bool | None = None) -> Task:
    """While locked, the task's end does not move (editTaskEndTime, editTaskPeriod)."""
    context: RequestContext = info.context
    require_tasks(context)
    task = await by_id(context, Task, id)
    (await plan_for_edit(context, task)).end_locked = endLocked
    return task


@task_type.field("endLocked")
async def resolve_end_locked(task: Task, info: Any) -> bool | None:
    plan = await plan_of(info.context, task)
    return plan.end_locked if plan is not None else None


# --- orderings ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ordering:
    """An edit of the order of a container's members: `members` selects them (in their current
    order) given the container, `place` writes one member's position."""

    argument: str  # the id argument of the container
    ids_argument: str
    find: Callable[[RequestContext, str, str], Awaitable[Any]]
    members: Callable[[Any], Sequence[ColumnElement[bool]]]
    what: str  # how a member is named in an error: "a child of task …"
    by_plan: bool  # the position is the plan's sibling_position (else Task.position)


async def _reorder(context: RequestContext, ordering: Ordering, container: Any,
                   ids: list[str | None]) -> None:
    if None in ids:
        raise BadInput(f"{ordering.ids_argument}[{ids.index(None)}]", "must be an id, not null")
    wanted = [i for i in ids if i is not None]
    check_unique_ids(wanted, ordering.ids_argument)
    positions = {t.task_id: t.sibling_position for t in
                 (await context.session.scalars(select(TaskPlan).where(
                     TaskPlan.organisation_id == context.org_id)))} if ordering.by_plan else {}
    members = list(await context.session.scalars(
        select(Task).where(Task.organisation_id == context.org_id,
                           *ordering.members(container))))
    if ordering.by_plan:
        members.sort(key=lambda t: (positions.get(t.id) is None, positions.get(t.id) or 0,
                                    t.position, t.id))
    else:
        members.sort(key=lambda t: (t.position, t.id))
    by_id = {t.id: t for t in members}
    for index, task_id in enumerate(wanted):
        if task_id not in by_id:
            raise BadInput(f"{ordering.ids_argument}[{index}]",
                           f"task {task_id!r} is not {ordering.what} {container.name!r}")
    ordered = [by_id[i] for i in wanted] + [t for t in members if t.id not in set(wanted)]
    for position, task in enumerate(ordered):
        if ordering.by_plan:
            (await plan_for_edit(context, task)).sibling_position = position
        else:
            task.position = position


async def _task(context: RequestContext, task_id: str, argument: str) -> Task:
    return await by_id(context, Task, task_id, argument)


async def _category(context: RequestContext, category_id: str, argument: str) -> TaskCategory:
    return await by_id(context, TaskCategory, category_id, argument)


async def _status(context: RequestContext, status_id: str, argument: str) -> TaskStatus:
    return await by_id(context, TaskStatus, status_id, argument)


# operation -> its ordering; listed ids come first in that order, the others after them
ORDERINGS = {
    "editTaskChildrenOrder": Ordering(
        "id", "childrenIds", _task, lambda t: [Task.parent_id == t.id], "a child of task",
        True),
    "editTaskCategoryChildrenOrder": Ordering(
        "id", "childrenIds", _category,
        lambda c: [Task.category_id == c.id, Task.parent_id.is_(None)],
        "a top-level task of task category", True),
    "editCategoryStatusTaskOrder": Ordering(
        "statusId", "taskIds", _status, lambda s: [Task.status_id == s.id],
        "in status", False),
}


def _bind_ordering(operation: str, ordering: Ordering) -> None:
    async def resolve(_root: Any, info: Any, **args: Any) -> Any:
        context: RequestContext = info.context
        require_tasks(context)
        container = await ordering.find(context, args[ordering.argument], ordering.argument)
        await _reorder(context, ordering, container, list(args[ordering.ids_argument]))
        await context.session.flush()
        return container

    mutation.set_field(operation, resolve)


for _operation, _ordering in ORDERINGS.items():
    _bind_ordering(_operation, _ordering)


# --- assignments with a start ---------------------------------------------------------------

# The assignments that start at a time: the model, and its relation's keys as tagging.py
# writes them (source: the tag).
ASSIGNMENTS: tuple[tuple[type[PersonTag] | type[ProjectTag], str], ...] = (
    (PersonTag, "person_id"),
    (ProjectTag, "project_id"),
)


@mutation.field("editAssignmentStartTime")
async def resolve_edit_assignment_start(_root: Any, info: Any, relationId: str,
                                        startTime: int | None = None) -> dict[str, Any]:
    """From when a tag assignment holds (null: always)."""
    context: RequestContext = info.context
    require_tags(context)
    for model, target in ASSIGNMENTS:
        row = cast(PersonTag | ProjectTag | None, (await context.session.scalars(
            select(model).where(model.organisation_id == context.org_id,
                                model.id == relationId))).first())
        if row is not None:
            if startTime is not None and startTime < 0:
                raise BadInput("startTime", "must be a timestamp (ms) not before 1970")
            row.start_ms = startTime
            return raw_relation(row.id, row.tag_id, "tagged", getattr(row, target),
                                "taggedBy", row.start_ms)
    raise NotFound("relationId", relationId, "tag assignment (of a person or a project)")


BINDABLES = [mutation, task_type]
