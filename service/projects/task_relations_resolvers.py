"""A task's relations stored on the task and its owners' table, read back: the project it is
planned on (`projects`, `relatedProjectsOfTask` on the project: assignTaskToProject,
resetTaskProjectsRelations), its owner and its potential owners (`owner`, `persons`, and on
the person `ownerOfTasks`, `personsOfTask`: assignOwnerOfTask, assignTaskToPerson)."""

from __future__ import annotations

from typing import Any

from ariadne import ObjectType
from sqlalchemy import func, select

from service.access import relation
from service.graphql.context import RequestContext
from service.models import Person, Project, Task, TaskOwner

task_relations = ObjectType("SvcTaskRelations")
project_relations = ObjectType("SvcProjectRelations")
person_relations = ObjectType("SvcPersonRelations")


@task_relations.field("projects")
async def resolve_task_projects(task: Task, info: Any) -> list[dict[str, Any]]:
    context: RequestContext = info.context
    if task.project_id is None:
        return []
    project = await context.session.get(Project, task.project_id)
    return [] if project is None else [relation(task.id, project)]


@project_relations.field("relatedProjectsOfTask")
async def resolve_project_tasks(project: Project, info: Any) -> list[dict[str, Any]]:
    context: RequestContext = info.context
    rows = await context.session.scalars(
        select(Task).where(Task.organisation_id == context.org_id, Task.project_id == project.id)
        .order_by(func.lower(Task.name), Task.id))
    return [relation(task.id, task) for task in rows.unique()]


async def _owners(context: RequestContext, task: Task, potential: bool) -> list[dict[str, Any]]:
    rows = await context.session.execute(
        select(TaskOwner.id, Person).join(Person, Person.id == TaskOwner.person_id)
        .where(TaskOwner.organisation_id == context.org_id, TaskOwner.task_id == task.id,
               TaskOwner.potential.is_(potential))
        .order_by(func.lower(Person.name), Person.id))
    return [relation(row_id, person) for row_id, person in rows.unique().tuples()]


@task_relations.field("owner")
async def resolve_task_owner(task: Task, info: Any) -> dict[str, Any] | None:
    owners = await _owners(info.context, task, False)
    return owners[0] if owners else None


@task_relations.field("persons")
async def resolve_task_persons(task: Task, info: Any) -> list[dict[str, Any]]:
    return await _owners(info.context, task, True)


async def _tasks_of(context: RequestContext, person: Person, potential: bool
                    ) -> list[dict[str, Any]]:
    rows = await context.session.execute(
        select(TaskOwner.id, Task).join(Task, Task.id == TaskOwner.task_id)
        .where(TaskOwner.organisation_id == context.org_id, TaskOwner.person_id == person.id,
               TaskOwner.potential.is_(potential))
        .order_by(func.lower(Task.name), Task.id))
    return [relation(row_id, task) for row_id, task in rows.unique().tuples()]


@person_relations.field("ownerOfTasks")
async def resolve_owner_of_tasks(person: Person, info: Any) -> list[dict[str, Any]]:
    return await _tasks_of(info.context, person, False)


@person_relations.field("personsOfTask")
async def resolve_persons_of_task(person: Person, info: Any) -> list[dict[str, Any]]:
    return await _tasks_of(info.context, person, True)


BINDABLES = [task_relations, project_relations, person_relations]
