"""Who owns a task (one owner at most), its potential owners (assignTaskToPerson: the task's
`persons`) and the project it is planned on (at most one). Admins edit them; the approval
workflow reads owners through service/projects/tasks_access.py."""

from __future__ import annotations

from typing import Any

from ariadne import MutationType
from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError

from service.access import TASKS, requirer
from service.errors import BadInput
from service.graphql.context import RequestContext
from service.lookup import by_id, get_in_org
from service.models import Person, Project, Task, TaskOwner
from service.structure import raw_relation

require_permission = requirer(TASKS)

mutation = MutationType()


def _owner_relation(row: TaskOwner) -> dict[str, Any]:
    return raw_relation(row.id, row.person_id, "ownerOfTasks", row.task_id, "owner")


@mutation.field("assignOwnerOfTask")
async def resolve_assign_owner_of_task(
    _root: Any, info: Any, taskId: str, personId: str
) -> dict[str, Any]:
    """Makes the person the one owner of the task (replacing any previous owner)."""
    context: RequestContext = info.context
    require_permission(context)
    session, org_id = context.session, context.org_id
    task = await by_id(context, Task, taskId, "taskId")
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
    require_permission(context)
    session = context.session
    task = await by_id(context, Task, taskId, "taskId")
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
    require_permission(context)
    task = await by_id(context, Task, taskId, "taskId")
    await context.session.execute(
        delete(TaskOwner).where(TaskOwner.task_id == task.id, TaskOwner.potential.is_(False))
    )
    return task


def _person_relation(row: TaskOwner) -> dict[str, Any]:
    return raw_relation(row.id, row.person_id, "personsOfTask", row.task_id, "persons")


async def _pair(context: RequestContext, taskId: str, personId: str) -> tuple[Task, Person]:
    task = await by_id(context, Task, taskId, "taskId")
    person = await get_in_org(context.session, Person, context.org_id, personId, "personId",
                              "person")
    return task, person


async def _row(context: RequestContext, task: Task, person: Person) -> TaskOwner | None:
    return (await context.session.scalars(select(TaskOwner).where(
        TaskOwner.task_id == task.id, TaskOwner.person_id == person.id))).first()


@mutation.field("assignTaskToPerson")
async def resolve_assign_task_to_person(
    _root: Any, info: Any, taskId: str, personId: str
) -> dict[str, Any]:
    """Makes the person a potential owner; idempotent (the owner already is one)."""
    context: RequestContext = info.context
    require_permission(context)
    task, person = await _pair(context, taskId, personId)
    row = await _row(context, task, person)
    if row is None:
        if person.archived:
            raise BadInput("personId", f"{person.name} is archived")
        row = TaskOwner(organisation_id=context.org_id, task_id=task.id, person_id=person.id,
                        potential=True)
        try:
            async with context.session.begin_nested():
                context.session.add(row)
                await context.session.flush()
        except IntegrityError:  # the same request, retried meanwhile
            row = await _row(context, task, person)
            assert row is not None
    return _person_relation(row)


@mutation.field("unassignTaskFromPerson")
async def resolve_unassign_task_from_person(
    _root: Any, info: Any, taskId: str, personId: str
) -> dict[str, Any]:
    context: RequestContext = info.context
    require_permission(context)
    task, person = await _pair(context, taskId, personId)
    row = await _row(context, task, person)
    if row is None or not row.potential:
        raise BadInput("personId",
                       f'{person.name} is not a potential owner of task "{task.name}"')
    relation = _person_relation(row)
    await context.session.delete(row)
    return relation


@mutation.field("resetTaskPersonsRelations")
async def resolve_reset_task_persons(_root: Any, info: Any, taskId: str) -> Task:
    context: RequestContext = info.context
    require_permission(context)
    task = await by_id(context, Task, taskId, "taskId")
    await context.session.execute(
        delete(TaskOwner).where(TaskOwner.task_id == task.id, TaskOwner.potential.is_(True))
    )
    return task


@mutation.field("assignTaskToProject")
async def resolve_assign_task_to_project(
    _root: Any, info: Any, taskId: str, projectId: str
) -> dict[str, Any]:
    """Plans the task on a project (a task is planned on at most one project)."""
    context: RequestContext = info.context
    require_permission(context)
    task = await by_id(context, Task, taskId, "taskId")
    project = await get_in_org(context.session, Project, context.org_id, projectId, "projectId",
                               "project")
    task.project_id = project.id
    return raw_relation(task.id, task.id, "projects", project.id, "relatedProjectsOfTask")


@mutation.field("unassignTaskFromProject")
async def resolve_unassign_task_from_project(
    _root: Any, info: Any, taskId: str, projectId: str
) -> dict[str, Any]:
    context: RequestContext = info.context
    require_permission(context)
    task = await by_id(context, Task, taskId, "taskId")
    project = await get_in_org(context.session, Project, context.org_id, projectId, "projectId",
                               "project")
    if task.project_id != project.id:
        raise BadInput("projectId", f'task "{task.name}" is not planned on "{project.name}"')
    task.project_id = None
    return raw_relation(task.id, task.id, "projects", project.id, "relatedProjectsOfTask")


@mutation.field("resetTaskProjectsRelations")
async def resolve_reset_task_projects(_root: Any, info: Any, taskId: str) -> Task:
    """The task is planned on no project any more (a retry changes nothing)."""
    context: RequestContext = info.context
    require_permission(context)
    task = await by_id(context, Task, taskId, "taskId")
    task.project_id = None
    return task


BINDABLES = [mutation]
