"""A task: reading and listing tasks, adding, deleting, archiving, and editing its name,
colour, period and effort.

Everyone in the organisation reads tasks; admins edit them. A task's status may limit how many
active tasks it holds (service/projects/task_statuses.py): adding or unarchiving a task into a full
status is refused. Its tree and dependencies are in task_tree.py, status moves in task_board.py,
owners and project in task_owners.py, categories and statuses in task_categories.py.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ariadne import MutationType, ObjectType, QueryType
from sqlalchemy import Select, delete, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from service.access import TASKS, requirer
from service.errors import BadInput, RuleViolation
from service.graphql.context import RequestContext
from service.graphql.filters import filter_clause
from service.lookup import by_id, get_many_in_org
from service.models import (
    Project,
    Task,
    TaskCategory,
    TaskDependency,
    TaskOwner,
    TaskStatus,
    TimeRecord,
)
from service.plannings import check_end_unlocked
from service.projects.task_status_history import record_status_entries
from service.projects.task_statuses import (
    category_statuses,
    check_capacity,
    default_task_category,
    next_position,
)
from service.structure import (
    active_clause,
    bind_archiving,
    bind_listing,
    check_unique_ids,
    descendants,
    name_contains,
    parent_map,
)

require_permission = requirer(TASKS)

query = QueryType()
mutation = MutationType()
task_type = ObjectType("SvcTask")


async def _task_select(
    context: RequestContext,
    filter: Sequence[Mapping[str, Any] | None] | None,
    archived: bool | None,
    category_id: str | None,
    start_ms: int | None = None,
    end_ms: int | None = None,
) -> Select[Any]:
    org_id = context.org_id

    def owned_by(person_id: str) -> Any:
        return select(TaskOwner.task_id).where(
            TaskOwner.organisation_id == org_id,
            TaskOwner.person_id == person_id,
            TaskOwner.potential.is_(False),
        )

    def in_project_categories(ids: list[str | None]) -> Any:
        return select(Project.id).where(
            Project.organisation_id == org_id,
            Project.category_id.in_([i for i in ids if i is not None]),
        )

    def clean(ids: list[str | None]) -> list[str]:
        return [i for i in ids if i is not None]

    conditions = {
        "id": lambda v: Task.id == v,
        "notId": lambda v: Task.id != v,
        "name": lambda v: name_contains(Task.name, v),
        "level": lambda v: Task.level == v,
        "archived": lambda v: Task.archived.is_(bool(v)),
        "categoryId": lambda v: Task.category_id == v,
        "ownerId": lambda v: Task.id.in_(owned_by(v)),
        "notOwnerId": lambda v: Task.id.not_in(owned_by(v)),
        "projectId": lambda v: Task.project_id == v,
        "notProjectId": lambda v: or_(Task.project_id.is_(None), Task.project_id != v),
        "statusId": lambda v: Task.status_id == v,
        "notStatusId": lambda v: or_(Task.status_id.is_(None), Task.status_id != v),
        "childrenOfId": lambda v: Task.parent_id == v,
        "projectCategoryIds": lambda v: Task.project_id.in_(in_project_categories(v)),
        "notProjectCategoryIds": lambda v: or_(
            Task.project_id.is_(None), Task.project_id.not_in(in_project_categories(v))
        ),
        "taskCategoryIds": lambda v: Task.category_id.in_(clean(v)),
        "notTaskCategoryIds": lambda v: or_(
            Task.category_id.is_(None), Task.category_id.not_in(clean(v))
        ),
    }
    statement = select(Task).where(
        Task.organisation_id == org_id, filter_clause(filter, conditions)
    )
    active = active_clause(Task.archived, archived, filter)
    if active is not None:
        statement = statement.where(active)
    if category_id is not None:
        statement = statement.where(Task.category_id == category_id)
    if start_ms is not None and end_ms is not None and end_ms < start_ms:
        raise BadInput("endTime", "is before startTime")
    # A task without dates is open-ended: it overlaps every window.
    if start_ms is not None:
        statement = statement.where(or_(Task.end_ms.is_(None), Task.end_ms >= start_ms))
    if end_ms is not None:
        statement = statement.where(or_(Task.start_ms.is_(None), Task.start_ms <= end_ms))
    return statement.order_by(func.lower(Task.name), Task.id)


async def _references(session: AsyncSession, tasks: Sequence[Task]) -> None:
    deleting = {task.id for task in tasks}
    for task in tasks:
        problems: list[str] = []
        records = await session.scalar(
            select(func.count()).select_from(TimeRecord).where(TimeRecord.task_id == task.id)
        )
        if records:
            problems.append(f"{records} time record{'s' if records != 1 else ''}")
        child_ids = await session.scalars(select(Task.id).where(Task.parent_id == task.id))
        children = [child for child in child_ids if child not in deleting]
        if children:
            problems.append(f"{len(children)} subtask{'s' if len(children) != 1 else ''}")
        if problems:
            raise RuleViolation(
                f'Task "{task.name}" ({task.id}) cannot be deleted: it is used by '
                + ", ".join(problems)
            )


async def _set_archived(
    context: RequestContext, ids: Sequence[str], argument: str, archived: bool, subtree: bool
) -> list[Task]:
    require_permission(context)
    session = context.session
    check_unique_ids(list(ids), argument)
    tasks = await get_many_in_org(session, Task, context.org_id, list(ids), argument, "task")
    targets: dict[str, Task] = {task.id: task for task in tasks}
    if subtree:
        parents = await parent_map(session, Task, context.org_id)
        extra = [i for i in descendants(parents, targets) if i not in targets]
        if extra:
            for task in await session.scalars(select(Task).where(Task.id.in_(extra))):
                targets.setdefault(task.id, task)
    if not archived:
        incoming = Counter(t.status_id for t in targets.values() if t.archived and t.status_id)
        for status_id, count in incoming.items():
            status = await session.get(TaskStatus, status_id)
            if status is not None:
                await check_capacity(session, status, count)
    for task in targets.values():
        task.archived = archived
    return list(targets.values())


def _check_effort(effort: float | None) -> None:
    if effort is not None and effort < 0:
        raise BadInput("effort", "must not be negative")


@query.field("getTask")
async def resolve_get_task(_root: Any, info: Any, id: str) -> Task:
    return await by_id(info.context, Task, id)


bind_listing(
    query,
    Task.id,
    lambda context, args: _task_select(
        context, args.get("filter"), args.get("archived"), args.get("categoryId"),
        args.get("startTime"), args.get("endTime"),
    ),
    get="getTasks",
    count="countTasks",
    ids="filterTaskIds",
)


@task_type.field("startTime")
def resolve_task_start(task: Task, _info: Any) -> int | None:
    return task.start_ms


@task_type.field("endTime")
def resolve_task_end(task: Task, _info: Any) -> int | None:
    return task.end_ms


@task_type.field("category")
async def resolve_task_category(task: Task, info: Any) -> TaskCategory:
    if task.category is not None:
        return task.category
    context: RequestContext = info.context
    return await default_task_category(context.session, context.org_id)


@task_type.field("status")
async def resolve_task_status(task: Task, info: Any) -> TaskStatus:
    if task.status is not None:
        return task.status
    category = await resolve_task_category(task, info)
    statuses = await category_statuses(info.context.session, category.id)
    if not statuses:
        raise RuleViolation(f'Task category "{category.name}" has no status')
    return statuses[0]


@mutation.field("addTask")
async def resolve_add_task(
    _root: Any, info: Any, name: str, categoryId: str | None = None,
    parentId: str | None = None, color: str | None = None, statusId: str | None = None,
) -> Task:
    context: RequestContext = info.context
    require_permission(context)
    session, org_id = context.session, context.org_id
    parent = await by_id(context, Task, parentId, "parentId") if parentId is not None else None
    status = (await by_id(context, TaskStatus, statusId, "statusId")
              if statusId is not None else None)
    if categoryId is not None:
        category = await by_id(context, TaskCategory, categoryId, "categoryId")
    elif status is not None:
        category = await by_id(context, TaskCategory, status.category_id, "statusId")
    elif parent is not None and parent.category_id is not None:
        category = await by_id(context, TaskCategory, parent.category_id, "parentId")
    else:
        category = await default_task_category(session, org_id)
    if status is None:
        statuses = await category_statuses(session, category.id)
        if not statuses:
            raise RuleViolation(f'Task category "{category.name}" has no status')
        status = statuses[0]
    elif status.category_id != category.id:
        raise BadInput("statusId", f'status "{status.name}" belongs to another task category')
    await check_capacity(session, status, 1)
    task = Task(
        organisation_id=org_id,
        name=name,
        category_id=category.id,
        status_id=status.id,
        parent_id=parent.id if parent else None,
        level=parent.level + 1 if parent else 0,
        color=color,
        archived=False,
        position=await next_position(session, status.id),
        created_ms=context.now_ms,
    )
    session.add(task)
    await session.flush()
    await record_status_entries(session, org_id, [(task.id, status.id)], context.now_ms)
    await session.refresh(task, ["category", "status"])
    return task


@mutation.field("deleteTask")
async def resolve_delete_task(_root: Any, info: Any, id: str, check: bool | None = None) -> Task:
    context: RequestContext = info.context
    require_permission(context)
    session = context.session
    task = await by_id(context, Task, id)
    await _references(session, [task])
    if check:
        context.skip_audit = True
        return task
    await session.execute(delete(TaskOwner).where(TaskOwner.task_id == task.id))
    await session.execute(
        delete(TaskDependency).where(
            or_(TaskDependency.task_id == task.id, TaskDependency.depends_on_id == task.id)
        )
    )
    await session.delete(task)
    return task


bind_archiving(mutation, _set_archived, "Task")


@mutation.field("editTaskName")
async def resolve_edit_task_name(_root: Any, info: Any, id: str, name: str) -> Task:
    require_permission(info.context)
    task = await by_id(info.context, Task, id)
    task.name = name
    return task


@mutation.field("editTaskColor")
async def resolve_edit_task_color(_root: Any, info: Any, id: str, color: str | None = None) -> Task:
    require_permission(info.context)
    task = await by_id(info.context, Task, id)
    task.color = color
    return task


@mutation.field("editTaskPeriod")
async def resolve_edit_task_period(_root: Any, info: Any, id: str, **kwargs: Any) -> Task:
    """Sets the arguments given (null clears); the others keep their value."""
    context: RequestContext = info.context
    require_permission(context)
    task = await by_id(context, Task, id)
    start = kwargs["startTime"] if "startTime" in kwargs else task.start_ms
    end = kwargs["endTime"] if "endTime" in kwargs else task.end_ms
    effort = kwargs["effort"] if "effort" in kwargs else task.effort
    if start is not None and end is not None and end < start:
        raise BadInput("endTime", "is before startTime")
    _check_effort(effort)
    await check_end_unlocked(context, task, end)
    task.start_ms, task.end_ms, task.effort = start, end, effort
    return task


@mutation.field("editTaskDuration")
async def resolve_edit_task_duration(
    _root: Any, info: Any, id: str, effort: float | None = None
) -> Task:
    context: RequestContext = info.context
    require_permission(context)
    task = await by_id(context, Task, id)
    _check_effort(effort)
    task.effort = effort
    return task


BINDABLES = [query, mutation, task_type]
