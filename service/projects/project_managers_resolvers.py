"""Who manages a project: its managers, the people who may become one (admins and managers),
and making or removing a manager (admins). Managers of an ancestor project also manage its
subprojects (service/access/project_managers.py)."""

from __future__ import annotations

from typing import Any

from ariadne import MutationType, ObjectType, QueryType
from sqlalchemy import delete, func, select

from service.access import PROJECTS, requirer
from service.errors import BadInput
from service.graphql.context import RequestContext
from service.lookup import by_id, get_in_org
from service.models import ROLE_ADMIN, ROLE_MANAGER, Person, Project, ProjectManager, Role
from service.structure import raw_relation

require_permission = requirer(PROJECTS)

query = QueryType()
mutation = MutationType()
project_type = ObjectType("SvcProject")


@query.field("getPotentialProjectOwners")
async def resolve_get_potential_project_owners(
    _root: Any, info: Any, projectId: str
) -> list[Person]:
    """Active people whose role may manage a project: admins and managers."""
    context: RequestContext = info.context
    await by_id(context, Project, projectId, "projectId")
    rows = await context.session.scalars(
        select(Person)
        .join(Role, Role.id == Person.role_id)
        .where(
            Person.organisation_id == context.org_id,
            Person.archived.is_(False),
            Role.kind.in_((ROLE_ADMIN, ROLE_MANAGER)),
        )
        .order_by(func.lower(Person.name), Person.id)
    )
    return list(rows.unique())


@project_type.field("managedBy")
async def resolve_project_managed_by(project: Project, info: Any) -> list[Person]:
    context: RequestContext = info.context
    rows = await context.session.scalars(
        select(Person)
        .join(ProjectManager, ProjectManager.person_id == Person.id)
        .where(
            ProjectManager.organisation_id == context.org_id,
            ProjectManager.project_id == project.id,
        )
        .order_by(func.lower(Person.name), Person.id)
    )
    return list(rows.unique())


def _manager_relation(row: ProjectManager) -> dict[str, Any]:
    return raw_relation(row.id, row.person_id, "managerOf", row.project_id, "managedBy")


@mutation.field("makeManagerOfProject")
async def resolve_make_manager_of_project(
    _root: Any, info: Any, managerId: str, projectId: str
) -> dict[str, Any]:
    context: RequestContext = info.context
    require_permission(context)
    session, org_id = context.session, context.org_id
    person = await get_in_org(session, Person, org_id, managerId, "managerId", "person")
    if person.archived:
        raise BadInput("managerId", f"{person.name} is archived")
    project = await by_id(context, Project, projectId, "projectId")
    row = (
        await session.scalars(
            select(ProjectManager).where(
                ProjectManager.project_id == project.id, ProjectManager.person_id == person.id
            )
        )
    ).first()
    if row is None:
        row = ProjectManager(organisation_id=org_id, project_id=project.id, person_id=person.id)
        session.add(row)
        await session.flush()
    return _manager_relation(row)


@mutation.field("removeManagerOfProject")
async def resolve_remove_manager_of_project(
    _root: Any, info: Any, managerId: str, projectId: str
) -> dict[str, Any]:
    context: RequestContext = info.context
    require_permission(context)
    session, org_id = context.session, context.org_id
    person = await get_in_org(session, Person, org_id, managerId, "managerId", "person")
    project = await by_id(context, Project, projectId, "projectId")
    row = (
        await session.scalars(
            select(ProjectManager).where(
                ProjectManager.project_id == project.id, ProjectManager.person_id == person.id
            )
        )
    ).first()
    if row is None:
        raise BadInput("managerId", f'{person.name} is not a manager of project "{project.name}"')
    relation = _manager_relation(row)
    await session.delete(row)
    return relation


@mutation.field("resetManagedProjects")
async def resolve_reset_managed_projects(_root: Any, info: Any, managerId: str) -> Person:
    context: RequestContext = info.context
    require_permission(context)
    person = await get_in_org(context.session, Person, context.org_id, managerId, "managerId",
                              "person")
    await context.session.execute(
        delete(ProjectManager).where(
            ProjectManager.organisation_id == context.org_id,
            ProjectManager.person_id == person.id,
        )
    )
    return person


BINDABLES = [query, mutation, project_type]
