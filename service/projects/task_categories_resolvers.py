"""Task categories and their workflow statuses: reading them, adding and deleting a category
or a status, renaming, ordering, colouring, and a status's limit of concurrent active tasks.

Everyone in the organisation reads them; admins edit them. The defaults and the capacity rule
are in service/projects/task_statuses.py.
"""

from __future__ import annotations

from typing import Any

from ariadne import MutationType, ObjectType, QueryType
from sqlalchemy import delete, func, select

from service.access import TASKS, requirer
from service.errors import BadInput, RuleViolation
from service.graphql.context import RequestContext
from service.lookup import by_id
from service.models import Task, TaskCategory, TaskStatus
from service.projects.task_statuses import (
    active_count,
    category_statuses,
    new_category,
    parse_status_color,
)
from service.structure import categories_by_name, check_unique_ids

require_permission = requirer(TASKS)

query = QueryType()
mutation = MutationType()
category_type = ObjectType("SvcTaskCategory")
status_type = ObjectType("SvcStatus")


@query.field("getTaskCategories")
async def resolve_get_task_categories(_root: Any, info: Any) -> list[TaskCategory]:
    context: RequestContext = info.context
    return await categories_by_name(context.session, TaskCategory, context.org_id)


@category_type.field("levelNames")
def resolve_category_level_names(category: TaskCategory, _info: Any) -> list[str]:
    return list(category.level_names or [])


@category_type.field("taskMove")
def resolve_category_task_move(category: TaskCategory, _info: Any) -> int | None:
    return category.task_move


@category_type.field("statuses")
async def resolve_category_statuses(category: TaskCategory, info: Any) -> list[TaskStatus]:
    return await category_statuses(info.context.session, category.id)


@status_type.field("maxConcurrentTasks")
def resolve_status_max(status: TaskStatus, _info: Any) -> int | None:
    return status.max_concurrent_tasks


@status_type.field("category")
def resolve_status_category(status: TaskStatus, _info: Any) -> str:
    return status.category_id


@mutation.field("addTaskCategory")
async def resolve_add_task_category(_root: Any, info: Any, name: str) -> TaskCategory:
    """A new category starts with the statuses To do, In progress, Done."""
    context: RequestContext = info.context
    require_permission(context)
    return await new_category(context.session, context.org_id, name)


@mutation.field("deleteTaskCategory")
async def resolve_delete_task_category(_root: Any, info: Any, id: str) -> TaskCategory:
    context: RequestContext = info.context
    require_permission(context)
    session = context.session
    category = await by_id(context, TaskCategory, id, "id")
    used = await session.scalar(
        select(func.count()).select_from(Task).where(Task.category_id == category.id)
    )
    if used:
        raise RuleViolation(
            f'Task category "{category.name}" cannot be deleted: {used} task'
            f"{'s' if used != 1 else ''} belong{'s' if used == 1 else ''} to it"
        )
    await session.execute(delete(TaskStatus).where(TaskStatus.category_id == category.id))
    await session.delete(category)
    return category


@mutation.field("editTaskCategoryName")
async def resolve_edit_task_category_name(
    _root: Any, info: Any, id: str, name: str
) -> TaskCategory:
    context: RequestContext = info.context
    require_permission(context)
    category = await by_id(context, TaskCategory, id, "id")
    category.name = name
    return category


@mutation.field("editCategoryTaskMove")
async def resolve_edit_category_task_move(
    _root: Any, info: Any, categoryId: str, taskMove: int
) -> TaskStatus:
    """Sets the category's task-move behavior; returns the category's first status."""
    context: RequestContext = info.context
    require_permission(context)
    category = await by_id(context, TaskCategory, categoryId, "categoryId")
    if taskMove < 0:
        raise BadInput("taskMove", "must not be negative")
    statuses = await category_statuses(context.session, category.id)
    if not statuses:
        raise RuleViolation(f'Task category "{category.name}" has no status')
    category.task_move = taskMove
    return statuses[0]


@mutation.field("addTaskCategoryStatus")
async def resolve_add_task_category_status(
    _root: Any, info: Any, categoryId: str, name: str
) -> TaskStatus:
    context: RequestContext = info.context
    require_permission(context)
    session = context.session
    category = await by_id(context, TaskCategory, categoryId, "categoryId")
    statuses = await category_statuses(session, category.id)
    status = TaskStatus(
        organisation_id=context.org_id,
        category_id=category.id,
        name=name,
        position=max((s.position for s in statuses), default=-1) + 1,
    )
    session.add(status)
    await session.flush()
    return status


@mutation.field("deleteTaskCategoryStatus")
async def resolve_delete_task_category_status(
    _root: Any, info: Any, categoryId: str, statusId: str
) -> TaskStatus:
    """Refused while active tasks are in the status; archived ones move to the first other."""
    context: RequestContext = info.context
    require_permission(context)
    session = context.session
    category = await by_id(context, TaskCategory, categoryId, "categoryId")
    status = await by_id(context, TaskStatus, statusId, "statusId")
    if status.category_id != category.id:
        raise BadInput("statusId", f'status "{status.name}" is not a status of "{category.name}"')
    others = [s for s in await category_statuses(session, category.id) if s.id != status.id]
    if not others:
        raise RuleViolation(f'"{status.name}" is the last status of "{category.name}"')
    active = await active_count(session, status.id)
    if active:
        raise RuleViolation(
            f'Status "{status.name}" still holds {active} task{"s" if active != 1 else ""}; '
            "move them to another status first"
        )
    for task in await session.scalars(select(Task).where(Task.status_id == status.id)):
        task.status_id = others[0].id
    await session.flush()
    await session.delete(status)
    return status


@mutation.field("editTaskCategoryStatusOrder")
async def resolve_edit_task_category_status_order(
    _root: Any, info: Any, id: str, statusIds: list[str]
) -> TaskCategory:
    context: RequestContext = info.context
    require_permission(context)
    category = await by_id(context, TaskCategory, id, "id")
    statuses = {s.id: s for s in await category_statuses(context.session, category.id)}
    check_unique_ids(statusIds, "statusIds")
    for index, status_id in enumerate(statusIds):
        if status_id not in statuses:
            raise BadInput(f"statusIds[{index}]",
                           f'{status_id!r} is not a status of "{category.name}"')
    if len(statusIds) != len(statuses):
        raise BadInput("statusIds", f'must list all {len(statuses)} statuses of the category')
    for position, status_id in enumerate(statusIds):
        statuses[status_id].position = position
    return category


@mutation.field("editTaskCategoryStatusName")
async def resolve_edit_task_category_status_name(
    _root: Any, info: Any, statusId: str, name: str
) -> TaskStatus:
    context: RequestContext = info.context
    require_permission(context)
    status = await by_id(context, TaskStatus, statusId, "statusId")
    if not name.strip():
        raise BadInput("name", "must not be empty")
    if len(name) > 255:
        raise BadInput("name", "must be at most 255 characters")
    status.name = name.strip()
    return status


@mutation.field("editTaskCategoryStatusColor")
async def resolve_edit_task_category_status_color(
    _root: Any, info: Any, statusId: str, color: str
) -> TaskStatus:
    context: RequestContext = info.context
    require_permission(context)
    status = await by_id(context, TaskStatus, statusId, "statusId")
    status.color = parse_status_color(color)
    return status


@mutation.field("editTaskCategoryStatusMaxConcurrentTasks")
async def resolve_edit_task_category_status_max(
    _root: Any, info: Any, statusId: str, maxConcurrentTasks: int | None = None
) -> TaskStatus:
    """Null removes the limit; a limit below the tasks the status holds now is refused."""
    context: RequestContext = info.context
    require_permission(context)
    status = await by_id(context, TaskStatus, statusId, "statusId")
    if maxConcurrentTasks is not None:
        if maxConcurrentTasks < 1:
            raise BadInput("maxConcurrentTasks", "must be at least 1 (or null for no limit)")
        current = await active_count(context.session, status.id)
        if current > maxConcurrentTasks:
            raise BadInput(
                "maxConcurrentTasks",
                f'status "{status.name}" already holds {current} tasks',
            )
    status.max_concurrent_tasks = maxConcurrentTasks
    return status


BINDABLES = [query, mutation, category_type, status_type]
