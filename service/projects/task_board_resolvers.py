"""Tasks on a status board: moving a task or several into a status (refused when the status is
full: service/projects/task_statuses.py), their order within it, and the status's active tasks."""

from __future__ import annotations

from typing import Any

from ariadne import MutationType, ObjectType
from sqlalchemy import select

from service.access import TASKS, requirer
from service.errors import BadInput
from service.graphql.context import RequestContext
from service.lookup import by_id, get_many_in_org
from service.models import Task, TaskStatus
from service.projects.task_status_history import record_status_entries
from service.projects.task_statuses import check_capacity, next_position
from service.structure import check_unique_ids

require_permission = requirer(TASKS)

mutation = MutationType()
status_type = ObjectType("SvcStatus")


@status_type.field("taskIds")
async def resolve_status_task_ids(status: TaskStatus, info: Any) -> list[str]:
    context: RequestContext = info.context
    rows = await context.session.scalars(
        select(Task.id)
        .where(Task.status_id == status.id, Task.archived.is_(False))
        .order_by(Task.position, Task.id)
    )
    return list(rows)


@mutation.field("editTaskStatus")
async def resolve_edit_task_status(_root: Any, info: Any, id: str, statusId: str) -> Task:
    context: RequestContext = info.context
    require_permission(context)
    session = context.session
    task = await by_id(context, Task, id)
    status = await by_id(context, TaskStatus, statusId, "statusId")
    if status.category_id != task.category_id:
        raise BadInput("statusId", f'status "{status.name}" belongs to another task category')
    if task.status_id != status.id:
        if not task.archived:
            await check_capacity(session, status, 1)
        task.position = await next_position(session, status.id)
        task.status_id = status.id
        await record_status_entries(session, context.org_id, [(task.id, status.id)],
                                    context.now_ms)
        await session.flush()
        await session.refresh(task, ["status"])
    return task


@mutation.field("moveTasksToStatus")
async def resolve_move_tasks_to_status(
    _root: Any, info: Any, taskIds: list[str], targetStatusId: str, orderedTaskIds: list[str]
) -> TaskStatus:
    """Moves tasks into a status, then orders the status's tasks: `orderedTaskIds` first, in
    that order, the others after them in their previous order."""
    context: RequestContext = info.context
    require_permission(context)
    session = context.session
    check_unique_ids(taskIds, "taskIds")
    check_unique_ids(orderedTaskIds, "orderedTaskIds")
    status = await by_id(context, TaskStatus, targetStatusId, "targetStatusId")
    tasks = await get_many_in_org(session, Task, context.org_id, taskIds, "taskIds", "task")
    for index, task in enumerate(tasks):
        if task.category_id != status.category_id:
            raise BadInput(f"taskIds[{index}]",
                           f'task "{task.name}" belongs to another task category')
    incoming = [t for t in tasks if t.status_id != status.id]
    await check_capacity(session, status, sum(1 for t in incoming if not t.archived))
    moving = {t.id for t in tasks}
    members = {
        t.id: t
        for t in await session.scalars(
            select(Task).where(Task.status_id == status.id).order_by(Task.position, Task.id)
        )
    }
    for task in tasks:
        members.setdefault(task.id, task)
    for index, task_id in enumerate(orderedTaskIds):
        if task_id not in members:
            raise BadInput(f"orderedTaskIds[{index}]",
                           f'task {task_id!r} is not in status "{status.name}"')
    ordered = [members[i] for i in orderedTaskIds]
    rest = [t for i, t in members.items() if i not in set(orderedTaskIds)]
    for position, task in enumerate(ordered + rest):
        task.position = position
        if task.id in moving:
            task.status_id = status.id
    await record_status_entries(session, context.org_id, [(t.id, status.id) for t in incoming],
                                context.now_ms)
    await session.flush()
    return status


BINDABLES = [mutation, status_type]
