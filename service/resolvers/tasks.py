"""Tasks (a tree), task categories and their workflow statuses, task owners.

Everyone in the organisation reads tasks, categories and statuses; admins edit them. A status
may limit how many active tasks it holds at once (`maxConcurrentTasks`): adding, moving or
unarchiving a task into a full status is refused.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ariadne import MutationType, ObjectType, QueryType
from sqlalchemy import Select, delete, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from service.errors import BadInput, RuleViolation
from service.graphql.context import RequestContext
from service.graphql.filters import filter_clause
from service.lookup import get_in_org, get_many_in_org
from service.models import (
    Person,
    Project,
    Task,
    TaskCategory,
    TaskDependency,
    TaskOwner,
    TaskStatus,
    TimeRecord,
)
from service.structure import (
    active_clause,
    bind_archiving,
    bind_listing,
    categories_by_name,
    check_new_parent,
    check_unique_ids,
    children_map,
    descendants,
    name_contains,
    oldest_in_org,
    parent_map,
    raw_relation,
    require_admin,
)

query = QueryType()
mutation = MutationType()
task_type = ObjectType("SvcTask")
category_type = ObjectType("SvcTaskCategory")
status_type = ObjectType("SvcStatus")

DEFAULT_CATEGORY_NAME = "Tasks"
DEFAULT_STATUSES = ("To do", "In progress", "Done")


# -- helpers ---------------------------------------------------------------------------------


def parse_status_color(value: str) -> int:
    """A status color is an integer: accepts "12", "#ff8800" or "0xff8800"."""
    text = value.strip().lower()
    try:
        if text.startswith("#"):
            return int(text[1:], 16)
        if text.startswith("0x"):
            return int(text[2:], 16)
        return int(text)
    except ValueError:
        raise BadInput("color", f"{value!r} is neither a number nor a #rrggbb color") from None


async def _new_category(session: AsyncSession, org_id: str, name: str) -> TaskCategory:
    category = TaskCategory(organisation_id=org_id, name=name, level_names=[], task_move=None)
    session.add(category)
    await session.flush()
    for position, status_name in enumerate(DEFAULT_STATUSES):
        session.add(TaskStatus(organisation_id=org_id, category_id=category.id,
                               name=status_name, position=position))
    await session.flush()
    return category


async def default_task_category(session: AsyncSession, org_id: str) -> TaskCategory:
    """The category of tasks added without one: the oldest category, created on first need."""
    first: TaskCategory | None = await oldest_in_org(session, TaskCategory, org_id)
    if first is not None:
        return first
    return await _new_category(session, org_id, DEFAULT_CATEGORY_NAME)


async def _statuses(session: AsyncSession, category_id: str) -> list[TaskStatus]:
    rows = await session.scalars(
        select(TaskStatus)
        .where(TaskStatus.category_id == category_id)
        .order_by(TaskStatus.position, TaskStatus.id)
    )
    return list(rows)


async def _task(context: RequestContext, task_id: str | None, argument: str = "id") -> Task:
    return await get_in_org(context.session, Task, context.org_id, task_id, argument, "task")


async def _status(
    context: RequestContext, status_id: str, argument: str = "statusId"
) -> TaskStatus:
    return await get_in_org(context.session, TaskStatus, context.org_id, status_id, argument,
                            "task status")


async def _category(context: RequestContext, category_id: str, argument: str) -> TaskCategory:
    return await get_in_org(context.session, TaskCategory, context.org_id, category_id, argument,
                            "task category")


async def _active_count(session: AsyncSession, status_id: str) -> int:
    count = await session.scalar(
        select(func.count()).select_from(Task).where(
            Task.status_id == status_id, Task.archived.is_(False)
        )
    )
    return int(count or 0)


async def check_capacity(session: AsyncSession, status: TaskStatus, incoming: int) -> None:
    """Refuses when `incoming` more active tasks would exceed the status's limit."""
    limit = status.max_concurrent_tasks
    if limit is None or incoming <= 0:
        return
    # Serialise concurrent moves into the same status (PostgreSQL; SQLite writes are serial).
    await session.execute(
        select(TaskStatus.id).where(TaskStatus.id == status.id).with_for_update()
    )
    current = await _active_count(session, status.id)
    if current + incoming > limit:
        raise RuleViolation(
            f'Status "{status.name}" allows at most {limit} concurrent task'
            f"{'s' if limit != 1 else ''} and already holds {current}"
        )


async def _next_position(session: AsyncSession, status_id: str) -> int:
    highest = await session.scalar(
        select(func.max(Task.position)).where(Task.status_id == status_id)
    )
    return int(highest) + 1 if highest is not None else 0


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
    require_admin(context)
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


def _fix_levels(parents: Mapping[str, str | None], root: Task, loaded: Mapping[str, Task]) -> None:
    children = children_map(parents)
    queue = [root]
    while queue:
        current = queue.pop(0)
        for child_id in children.get(current.id, []):
            child = loaded[child_id]
            child.level = current.level + 1
            queue.append(child)


# -- queries ---------------------------------------------------------------------------------


@query.field("getTask")
async def resolve_get_task(_root: Any, info: Any, id: str) -> Task:
    return await _task(info.context, id)


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


@query.field("getTaskCategories")
async def resolve_get_task_categories(_root: Any, info: Any) -> list[TaskCategory]:
    context: RequestContext = info.context
    return await categories_by_name(context.session, TaskCategory, context.org_id)


# -- type fields -----------------------------------------------------------------------------


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
    statuses = await _statuses(info.context.session, category.id)
    if not statuses:
        raise RuleViolation(f'Task category "{category.name}" has no status')
    return statuses[0]


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
        select(Task.id).where(Task.parent_id == task.id).order_by(Task.position, Task.id)
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


@category_type.field("levelNames")
def resolve_category_level_names(category: TaskCategory, _info: Any) -> list[str]:
    return list(category.level_names or [])


@category_type.field("taskMove")
def resolve_category_task_move(category: TaskCategory, _info: Any) -> int | None:
    return category.task_move


@category_type.field("statuses")
async def resolve_category_statuses(category: TaskCategory, info: Any) -> list[TaskStatus]:
    return await _statuses(info.context.session, category.id)


@status_type.field("maxConcurrentTasks")
def resolve_status_max(status: TaskStatus, _info: Any) -> int | None:
    return status.max_concurrent_tasks


@status_type.field("category")
def resolve_status_category(status: TaskStatus, _info: Any) -> str:
    return status.category_id


@status_type.field("taskIds")
async def resolve_status_task_ids(status: TaskStatus, info: Any) -> list[str]:
    context: RequestContext = info.context
    rows = await context.session.scalars(
        select(Task.id)
        .where(Task.status_id == status.id, Task.archived.is_(False))
        .order_by(Task.position, Task.id)
    )
    return list(rows)


# -- task mutations --------------------------------------------------------------------------


@mutation.field("addTask")
async def resolve_add_task(
    _root: Any, info: Any, name: str, categoryId: str | None = None,
    parentId: str | None = None, color: str | None = None, statusId: str | None = None,
) -> Task:
    context: RequestContext = info.context
    require_admin(context)
    session, org_id = context.session, context.org_id
    parent = await _task(context, parentId, "parentId") if parentId is not None else None
    status = await _status(context, statusId) if statusId is not None else None
    if categoryId is not None:
        category = await _category(context, categoryId, "categoryId")
    elif status is not None:
        category = await _category(context, status.category_id, "statusId")
    elif parent is not None and parent.category_id is not None:
        category = await _category(context, parent.category_id, "parentId")
    else:
        category = await default_task_category(session, org_id)
    if status is None:
        statuses = await _statuses(session, category.id)
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
        position=await _next_position(session, status.id),
        created_ms=context.now_ms,
    )
    session.add(task)
    await session.flush()
    await session.refresh(task, ["category", "status"])
    return task


@mutation.field("deleteTask")
async def resolve_delete_task(_root: Any, info: Any, id: str, check: bool | None = None) -> Task:
    context: RequestContext = info.context
    require_admin(context)
    session = context.session
    task = await _task(context, id)
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
    require_admin(info.context)
    task = await _task(info.context, id)
    task.name = name
    return task


@mutation.field("editTaskColor")
async def resolve_edit_task_color(_root: Any, info: Any, id: str, color: str | None = None) -> Task:
    require_admin(info.context)
    task = await _task(info.context, id)
    task.color = color
    return task


@mutation.field("editTaskParent")
async def resolve_edit_task_parent(
    _root: Any, info: Any, id: str, parentId: str | None = None
) -> Task:
    context: RequestContext = info.context
    require_admin(context)
    session = context.session
    task = await _task(context, id)
    parent = await _task(context, parentId, "parentId") if parentId is not None else None
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
    require_admin(context)
    session = context.session
    task = await _task(context, id)
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


@mutation.field("editTaskPeriod")
async def resolve_edit_task_period(_root: Any, info: Any, id: str, **kwargs: Any) -> Task:
    """Sets the arguments given (null clears); the others keep their value."""
    context: RequestContext = info.context
    require_admin(context)
    task = await _task(context, id)
    start = kwargs["startTime"] if "startTime" in kwargs else task.start_ms
    end = kwargs["endTime"] if "endTime" in kwargs else task.end_ms
    effort = kwargs["effort"] if "effort" in kwargs else task.effort
    if start is not None and end is not None and end < start:
        raise BadInput("endTime", "is before startTime")
    _check_effort(effort)
    task.start_ms, task.end_ms, task.effort = start, end, effort
    return task


@mutation.field("editTaskDuration")
async def resolve_edit_task_duration(
    _root: Any, info: Any, id: str, effort: float | None = None
) -> Task:
    context: RequestContext = info.context
    require_admin(context)
    task = await _task(context, id)
    _check_effort(effort)
    task.effort = effort
    return task


@mutation.field("editTaskStatus")
async def resolve_edit_task_status(_root: Any, info: Any, id: str, statusId: str) -> Task:
    context: RequestContext = info.context
    require_admin(context)
    session = context.session
    task = await _task(context, id)
    status = await _status(context, statusId)
    if status.category_id != task.category_id:
        raise BadInput("statusId", f'status "{status.name}" belongs to another task category')
    if task.status_id != status.id:
        if not task.archived:
            await check_capacity(session, status, 1)
        task.position = await _next_position(session, status.id)
        task.status_id = status.id
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
    require_admin(context)
    session = context.session
    check_unique_ids(taskIds, "taskIds")
    check_unique_ids(orderedTaskIds, "orderedTaskIds")
    status = await _status(context, targetStatusId, "targetStatusId")
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
    await session.flush()
    return status


# -- owners and project ----------------------------------------------------------------------


def _owner_relation(row: TaskOwner) -> dict[str, Any]:
    return raw_relation(row.id, row.person_id, "ownerOfTasks", row.task_id, "owner")


@mutation.field("assignOwnerOfTask")
async def resolve_assign_owner_of_task(
    _root: Any, info: Any, taskId: str, personId: str
) -> dict[str, Any]:
    """Makes the person the one owner of the task (replacing any previous owner)."""
    context: RequestContext = info.context
    require_admin(context)
    session, org_id = context.session, context.org_id
    task = await _task(context, taskId, "taskId")
    person = await get_in_org(session, Person, org_id, personId, "personId", "person")
    if person.archived:
        raise BadInput("personId", f"{person.name} is archived")
    rows = list(await session.scalars(select(TaskOwner).where(TaskOwner.task_id == task.id)))
    mine = next((r for r in rows if r.person_id == person.id), None)
    for row in rows:
        if row is not mine and not row.potential:
            await session.delete(row)
    if mine is None:
        mine = TaskOwner(organisation_id=org_id, task_id=task.id, person_id=person.id,
                         potential=False)
        session.add(mine)
    mine.potential = False
    await session.flush()
    return _owner_relation(mine)


@mutation.field("unassignOwnerOfTask")
async def resolve_unassign_owner_of_task(
    _root: Any, info: Any, taskId: str, personId: str
) -> dict[str, Any]:
    context: RequestContext = info.context
    require_admin(context)
    session = context.session
    task = await _task(context, taskId, "taskId")
    person = await get_in_org(session, Person, context.org_id, personId, "personId", "person")
    row = (
        await session.scalars(
            select(TaskOwner).where(
                TaskOwner.task_id == task.id,
                TaskOwner.person_id == person.id,
                TaskOwner.potential.is_(False),
            )
        )
    ).first()
    if row is None:
        raise BadInput("personId", f'{person.name} is not the owner of task "{task.name}"')
    relation = _owner_relation(row)
    await session.delete(row)
    return relation


@mutation.field("resetTaskOwner")
async def resolve_reset_task_owner(_root: Any, info: Any, taskId: str) -> Task:
    context: RequestContext = info.context
    require_admin(context)
    task = await _task(context, taskId, "taskId")
    await context.session.execute(
        delete(TaskOwner).where(TaskOwner.task_id == task.id, TaskOwner.potential.is_(False))
    )
    return task


@mutation.field("assignTaskToProject")
async def resolve_assign_task_to_project(
    _root: Any, info: Any, taskId: str, projectId: str
) -> dict[str, Any]:
    """Plans the task on a project (a task is planned on at most one project)."""
    context: RequestContext = info.context
    require_admin(context)
    task = await _task(context, taskId, "taskId")
    project = await get_in_org(context.session, Project, context.org_id, projectId, "projectId",
                               "project")
    task.project_id = project.id
    return raw_relation(task.id, task.id, "projects", project.id, "relatedProjectsOfTask")


@mutation.field("unassignTaskFromProject")
async def resolve_unassign_task_from_project(
    _root: Any, info: Any, taskId: str, projectId: str
) -> dict[str, Any]:
    context: RequestContext = info.context
    require_admin(context)
    task = await _task(context, taskId, "taskId")
    project = await get_in_org(context.session, Project, context.org_id, projectId, "projectId",
                               "project")
    if task.project_id != project.id:
        raise BadInput("projectId", f'task "{task.name}" is not planned on "{project.name}"')
    task.project_id = None
    return raw_relation(task.id, task.id, "projects", project.id, "relatedProjectsOfTask")


# -- categories and statuses -----------------------------------------------------------------


@mutation.field("addTaskCategory")
async def resolve_add_task_category(_root: Any, info: Any, name: str) -> TaskCategory:
    """A new category starts with the statuses To do, In progress, Done."""
    context: RequestContext = info.context
    require_admin(context)
    return await _new_category(context.session, context.org_id, name)


@mutation.field("deleteTaskCategory")
async def resolve_delete_task_category(_root: Any, info: Any, id: str) -> TaskCategory:
    context: RequestContext = info.context
    require_admin(context)
    session = context.session
    category = await _category(context, id, "id")
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
    require_admin(context)
    category = await _category(context, id, "id")
    category.name = name
    return category


@mutation.field("editCategoryTaskMove")
async def resolve_edit_category_task_move(
    _root: Any, info: Any, categoryId: str, taskMove: int
) -> TaskStatus:
    """Sets the category's task-move behavior; returns the category's first status."""
    context: RequestContext = info.context
    require_admin(context)
    category = await _category(context, categoryId, "categoryId")
    if taskMove < 0:
        raise BadInput("taskMove", "must not be negative")
    statuses = await _statuses(context.session, category.id)
    if not statuses:
        raise RuleViolation(f'Task category "{category.name}" has no status')
    category.task_move = taskMove
    return statuses[0]


@mutation.field("addTaskCategoryStatus")
async def resolve_add_task_category_status(
    _root: Any, info: Any, categoryId: str, name: str
) -> TaskStatus:
    context: RequestContext = info.context
    require_admin(context)
    session = context.session
    category = await _category(context, categoryId, "categoryId")
    statuses = await _statuses(session, category.id)
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
    require_admin(context)
    session = context.session
    category = await _category(context, categoryId, "categoryId")
    status = await _status(context, statusId)
    if status.category_id != category.id:
        raise BadInput("statusId", f'status "{status.name}" is not a status of "{category.name}"')
    others = [s for s in await _statuses(session, category.id) if s.id != status.id]
    if not others:
        raise RuleViolation(f'"{status.name}" is the last status of "{category.name}"')
    active = await _active_count(session, status.id)
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
    require_admin(context)
    category = await _category(context, id, "id")
    statuses = {s.id: s for s in await _statuses(context.session, category.id)}
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
    require_admin(context)
    status = await _status(context, statusId)
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
    require_admin(context)
    status = await _status(context, statusId)
    status.color = parse_status_color(color)
    return status


@mutation.field("editTaskCategoryStatusMaxConcurrentTasks")
async def resolve_edit_task_category_status_max(
    _root: Any, info: Any, statusId: str, maxConcurrentTasks: int | None = None
) -> TaskStatus:
    """Null removes the limit; a limit below the tasks the status holds now is refused."""
    context: RequestContext = info.context
    require_admin(context)
    status = await _status(context, statusId)
    if maxConcurrentTasks is not None:
        if maxConcurrentTasks < 1:
            raise BadInput("maxConcurrentTasks", "must be at least 1 (or null for no limit)")
        current = await _active_count(context.session, status.id)
        if current > maxConcurrentTasks:
            raise BadInput(
                "maxConcurrentTasks",
                f'status "{status.name}" already holds {current} tasks',
            )
    status.max_concurrent_tasks = maxConcurrentTasks
    return status


BINDABLES = [query, mutation, task_type, category_type, status_type]
