"""Tasks as a tree and a graph: a task's parent and children (levels follow a move), and the
tasks it depends on (no task depends on itself, no dependency cycle). Admins edit them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ariadne import MutationType, ObjectType
from sqlalchemy import delete, func, select

from service.access import TASKS, requirer
from service.errors import BadInput
from service.graphql.context import RequestContext
from service.lookup import by_id, get_many_in_org
from service.models import Task, TaskDependency, TaskPlan
from service.structure import (
    check_new_parent,
    check_unique_ids,
    children_map,
    descendants,
    parent_map,
)

require_permission = requirer(TASKS)

mutation = MutationType()
task_type = ObjectType("SvcTask")


def _fix_levels(parents: Mapping[str, str | None], root: Task, loaded: Mapping[str, Task]) -> None:
    children = children_map(parents)
    queue = [root]
    while queue:
        current = queue.pop(0)
        for child_id in children.get(current.id, []):
            child = loaded[child_id]
            child.level = current.level + 1
            queue.append(child)


@task_type.field("parent")
async def resolve_task_parent(task: Task, info: Any) -> Task | None:
    if task.parent_id is None:
        return None
    context: RequestContext = info.context
    return await context.session.get(Task, task.parent_id)


@task_type.field("childrenIds")
async def resolve_task_children_ids(task: Task, info: Any) -> list[str]:
    context: RequestContext = info.context
    rows = await context.session.scalars(
        select(Task.id)
        .outerjoin(TaskPlan, TaskPlan.task_id == Task.id)
        .where(Task.parent_id == task.id)
        # the order of editTaskChildrenOrder first, then the tasks never ordered
        .order_by(TaskPlan.sibling_position.is_(None), TaskPlan.sibling_position,
                  Task.position, Task.id)
    )
    return list(rows)


@task_type.field("dependencies")
async def resolve_task_dependencies(task: Task, info: Any) -> list[Task]:
    context: RequestContext = info.context
    rows = await context.session.scalars(
        select(Task)
        .join(TaskDependency, TaskDependency.depends_on_id == Task.id)
        .where(TaskDependency.task_id == task.id)
        .order_by(func.lower(Task.name), Task.id)
    )
    return list(rows.unique())


@mutation.field("editTaskParent")
async def resolve_edit_task_parent(
    _root: Any, info: Any, id: str, parentId: str | None = None
) -> Task:
    context: RequestContext = info.context
    require_permission(context)
    session = context.session
    task = await by_id(context, Task, id)
    parent = await by_id(context, Task, parentId, "parentId") if parentId is not None else None
    parents = await parent_map(session, Task, context.org_id)
    check_new_parent(parents, task.id, parentId, "task")
    task.parent_id = parentId
    task.level = parent.level + 1 if parent else 0
    parents[task.id] = parentId
    subtree = descendants(parents, [task.id])
    if subtree:
        loaded = {t.id: t for t in await session.scalars(select(Task).where(Task.id.in_(subtree)))}
        _fix_levels(parents, task, loaded)
    return task


@mutation.field("editTaskDependencies")
async def resolve_edit_task_dependencies(
    _root: Any, info: Any, id: str, dependencyIds: list[str | None]
) -> Task:
    """Replaces the tasks this task depends on; refuses itself and dependency cycles."""
    context: RequestContext = info.context
    require_permission(context)
    session = context.session
    task = await by_id(context, Task, id)
    if None in dependencyIds:
        raise BadInput(f"dependencyIds[{dependencyIds.index(None)}]", "must be an id, not null")
    ids = [i for i in dependencyIds if i is not None]
    check_unique_ids(ids, "dependencyIds")
    await get_many_in_org(session, Task, context.org_id, ids, "dependencyIds", "task")
    graph: dict[str, set[str]] = {}
    for row in await session.execute(
        select(TaskDependency.task_id, TaskDependency.depends_on_id).where(
            TaskDependency.organisation_id == context.org_id
        )
    ):
        graph.setdefault(row[0], set()).add(row[1])
    graph[task.id] = set(ids)
    for index, dependency in enumerate(ids):
        if dependency == task.id:
            raise BadInput(f"dependencyIds[{index}]", "a task cannot depend on itself")
        seen: set[str] = set()
        stack = [dependency]
        while stack:
            current = stack.pop()
            if current == task.id:
                raise BadInput(f"dependencyIds[{index}]", "would create a dependency cycle")
            if current not in seen:
                seen.add(current)
                stack.extend(graph.get(current, ()))
    await session.execute(delete(TaskDependency).where(TaskDependency.task_id == task.id))
    for dependency in ids:
        session.add(TaskDependency(organisation_id=context.org_id, task_id=task.id,
                                   depends_on_id=dependency))
    await session.flush()
    return task


BINDABLES = [mutation, task_type]
