"""A project: reading and listing projects, adding, duplicating, archiving, and editing its
name, colour and availability.

Everyone in the organisation reads projects (a non-admin lists those they may use or manage);
admins add, duplicate and archive them; a manager of a project (directly or through an
ancestor) may rename it and change its color and availability. The tree is in project_tree.py,
deletion in project_deletion.py, managers in project_managers.py, categories in
project_categories.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ariadne import MutationType, ObjectType, QueryType
from sqlalchemy import Select, func, select

from service.access import (
    PROJECTS,
    listable_project_ids,
    managed_project_ids,
    project_manager_ids,
    requirer,
)
from service.errors import BadInput, PermissionDenied
from service.graphql.context import RequestContext
from service.graphql.filters import filter_clause
from service.lookup import by_id, get_many_in_org
from service.models import Project, ProjectCategory, ProjectManager, ProjectTag
from service.projects.lookup import default_project_category
from service.structure import (
    active_clause,
    ancestors,
    bind_archiving,
    bind_listing,
    check_unique_ids,
    descendants,
    name_contains,
    parent_map,
)

require_permission = requirer(PROJECTS)

query = QueryType()
mutation = MutationType()
project_type = ObjectType("SvcProject")


async def require_project_editor(context: RequestContext, project: Project) -> None:
    """Admins, and managers of the project (or of an ancestor), may edit it."""
    if context.is_admin:
        return
    if context.is_manager and context.person.id in await project_manager_ids(
        context.session, context.org_id, project.id
    ):
        return
    raise PermissionDenied("only an administrator or a manager of the project may edit it")


async def _project_select(
    context: RequestContext,
    filter: Sequence[Mapping[str, Any] | None] | None,
    archived: bool | None,
    category_id: str | None,
) -> Select[Any]:
    session, org_id = context.session, context.org_id
    parents: dict[str, str | None] = {}
    managed: dict[str, set[str]] = {}
    items = [item for item in filter or [] if item is not None]
    if any(item.get("subProjectId") for item in items):
        parents = await parent_map(session, Project, org_id)
    for item in items:
        manager_id = item.get("managedById")
        if manager_id and manager_id not in managed:
            managed[manager_id] = await managed_project_ids(session, org_id, manager_id)

    def tagged(tag_ids: list[str | None]) -> Any:
        return select(ProjectTag.project_id).where(
            ProjectTag.organisation_id == org_id,
            ProjectTag.tag_id.in_([t for t in tag_ids if t is not None]),
        )

    conditions = {
        "id": lambda v: Project.id == v,
        "notId": lambda v: Project.id != v,
        "name": lambda v: name_contains(Project.name, v),
        "level": lambda v: Project.level == v,
        "archived": lambda v: Project.archived.is_(bool(v)),
        "tagIds": lambda v: Project.id.in_(tagged(v)),
        "notTagIds": lambda v: Project.id.not_in(tagged(v)),
        "categoryId": lambda v: Project.category_id == v,
        "managedById": lambda v: Project.id.in_(sorted(managed.get(v, set()))),
        "subProjectId": lambda v: Project.id.in_(ancestors(parents, v)),
    }
    statement = select(Project).where(
        Project.organisation_id == org_id, filter_clause(filter, conditions)
    )
    active = active_clause(Project.archived, archived, items)
    if active is not None:
        statement = statement.where(active)
    if category_id is not None:
        statement = statement.where(Project.category_id == category_id)
    listable = await listable_project_ids(context)
    if listable is not None:  # a non-admin lists the projects they may use or manage
        statement = statement.where(Project.id.in_(sorted(listable)))
    return statement.order_by(func.lower(Project.name), Project.id)


async def _set_archived(
    context: RequestContext, ids: Sequence[str], argument: str, archived: bool, subtree: bool
) -> list[Project]:
    require_permission(context)
    check_unique_ids(list(ids), argument)
    projects = await get_many_in_org(
        context.session, Project, context.org_id, list(ids), argument, "project"
    )
    targets: dict[str, Project] = {project.id: project for project in projects}
    if subtree:
        parents = await parent_map(context.session, Project, context.org_id)
        extra = [i for i in descendants(parents, targets) if i not in targets]
        if extra:
            for project in await context.session.scalars(
                select(Project).where(Project.id.in_(extra))
            ):
                targets.setdefault(project.id, project)
    for project in targets.values():
        project.archived = archived
    return list(targets.values())


@query.field("getProject")
async def resolve_get_project(_root: Any, info: Any, id: str) -> Project:
    return await by_id(info.context, Project, id)


bind_listing(
    query,
    Project.id,
    lambda context, args: _project_select(
        context, args.get("filter"), args.get("archived"), args.get("categoryId")
    ),
    get="getProjects",
    count="countProjects",
    ids="filterProjectIds",
)


@project_type.field("category")
async def resolve_project_category(project: Project, info: Any) -> ProjectCategory:
    if project.category is not None:
        return project.category
    context: RequestContext = info.context
    return await default_project_category(context.session, context.org_id)


@project_type.field("availability")
def resolve_project_availability(project: Project, _info: Any) -> dict[str, Any]:
    return {"value": project.availability}


@mutation.field("addProject")
async def resolve_add_project(
    _root: Any, info: Any, name: str, categoryId: str | None = None,
    parentId: str | None = None, color: str | None = None,
) -> Project:
    context: RequestContext = info.context
    require_permission(context)
    session, org_id = context.session, context.org_id
    parent = await by_id(context, Project, parentId, "parentId") if parentId is not None else None
    if parent is not None and parent.archived:
        raise BadInput("parentId", f'project "{parent.name}" is archived')
    if categoryId is not None:
        category = await by_id(context, ProjectCategory, categoryId, "categoryId")
    elif parent is not None and parent.category is not None:
        category = parent.category
    else:
        category = await default_project_category(session, org_id)
    project = Project(
        organisation_id=org_id,
        name=name,
        parent_id=parent.id if parent else None,
        category_id=category.id,
        level=parent.level + 1 if parent else 0,
        color=color,
        archived=False,
        availability=None,
        created_ms=context.now_ms,
    )
    session.add(project)
    await session.flush()
    await session.refresh(project, ["category"])
    return project


@mutation.field("duplicateProject")
async def resolve_duplicate_project(
    _root: Any, info: Any, id: str, name: str, parentId: str | None = None
) -> Project:
    """A copy of the project (category, color, availability, managers, tags), under the same
    parent or under `parentId`."""
    context: RequestContext = info.context
    require_permission(context)
    session, org_id = context.session, context.org_id
    source = await by_id(context, Project, id)
    if parentId is not None:
        parent: Project | None = await by_id(context, Project, parentId, "parentId")
    elif source.parent_id is not None:
        parent = await session.get(Project, source.parent_id)
    else:
        parent = None
    copy = Project(
        organisation_id=org_id,
        name=name,
        parent_id=parent.id if parent else None,
        category_id=source.category_id,
        level=parent.level + 1 if parent else 0,
        color=source.color,
        archived=False,
        availability=source.availability,
        created_ms=context.now_ms,
    )
    session.add(copy)
    await session.flush()
    for manager in await session.scalars(
        select(ProjectManager).where(ProjectManager.project_id == source.id)
    ):
        session.add(ProjectManager(organisation_id=org_id, project_id=copy.id,
                                   person_id=manager.person_id))
    for tag in await session.scalars(select(ProjectTag).where(ProjectTag.project_id == source.id)):
        session.add(ProjectTag(organisation_id=org_id, project_id=copy.id, tag_id=tag.tag_id,
                               start_ms=tag.start_ms))
    await session.flush()
    await session.refresh(copy, ["category"])
    return copy


bind_archiving(mutation, _set_archived, "Project")


@mutation.field("editProjectName")
async def resolve_edit_project_name(_root: Any, info: Any, id: str, name: str) -> Project:
    project = await by_id(info.context, Project, id)
    await require_project_editor(info.context, project)
    project.name = name
    return project


@mutation.field("editProjectColor")
async def resolve_edit_project_color(
    _root: Any, info: Any, id: str, color: str | None = None
) -> Project:
    project = await by_id(info.context, Project, id)
    await require_project_editor(info.context, project)
    project.color = color
    return project


@mutation.field("editProjectAvailability")
async def resolve_edit_project_availability(
    _root: Any, info: Any, id: str, availability: bool
) -> Project:
    project = await by_id(info.context, Project, id)
    await require_project_editor(info.context, project)
    project.availability = availability
    return project


BINDABLES = [query, mutation, project_type]
