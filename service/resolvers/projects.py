"""Projects (a tree), project categories and project managers.

Everyone in the organisation reads projects and categories; admins create, edit and delete
them; a manager of a project (directly or through an ancestor) may rename it and change its
color and availability.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ariadne import MutationType, ObjectType, QueryType
from sqlalchemy import Select, delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from service.errors import BadInput, PermissionDenied, RuleViolation
from service.graphql.context import RequestContext
from service.graphql.filters import filter_clause
from service.item_access import listable_project_ids
from service.lookup import get_in_org, get_many_in_org
from service.models import (
    ExpenseRecord,
    Person,
    Project,
    ProjectCategory,
    ProjectManager,
    ProjectTag,
    Role,
    Task,
    time_record_projects,
)
from service.models.person import ROLE_ADMIN, ROLE_MANAGER
from service.projects_access import managed_project_ids, project_manager_ids
from service.structure import (
    active_clause,
    ancestors,
    bind_archiving,
    bind_listing,
    categories_by_name,
    check_new_parent,
    check_unique_ids,
    children_map,
    descendants,
    name_contains,
    oldest_category_or_new,
    parent_map,
    raw_relation,
    require_admin,
)

query = QueryType()
mutation = MutationType()
project_type = ObjectType("SvcProject")
category_type = ObjectType("SvcProjectCategory")

DEFAULT_CATEGORY_NAME = "Projects"


# -- helpers ---------------------------------------------------------------------------------


async def default_project_category(session: AsyncSession, org_id: str) -> ProjectCategory:
    """The category of projects added without one: the oldest category, created on first need."""
    category: ProjectCategory = await oldest_category_or_new(
        session, ProjectCategory, org_id, DEFAULT_CATEGORY_NAME
    )
    return category


async def require_project_editor(context: RequestContext, project: Project) -> None:
    """Admins, and managers of the project (or of an ancestor), may edit it."""
    if context.is_admin:
        return
    if context.is_manager and context.person.id in await project_manager_ids(
        context.session, context.org_id, project.id
    ):
        return
    raise PermissionDenied("only an administrator or a manager of the project may edit it")


async def _project(context: RequestContext, project_id: str, argument: str = "id") -> Project:
    return await get_in_org(context.session, Project, context.org_id, project_id, argument,
                            "project")


def _check_level_names(level_names: Sequence[str | None] | None) -> list[str]:
    names: list[str] = []
    for index, value in enumerate(level_names or []):
        if value is None:
            raise BadInput(f"levelNames[{index}]", "must be a string, not null")
        names.append(value)
    return names


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


async def _references(
    session: AsyncSession, org_id: str, projects: Sequence[Project]
) -> None:
    """Refuses deleting projects that time records, expense records or subprojects use."""
    ids = [project.id for project in projects]
    deleting = set(ids)
    for project in projects:
        problems: list[str] = []
        records = await session.scalar(
            select(func.count()).select_from(time_record_projects).where(
                time_record_projects.c.project_id == project.id
            )
        )
        if records:
            problems.append(f"{records} time record{'s' if records != 1 else ''}")
        expenses = await session.scalar(
            select(func.count()).select_from(ExpenseRecord).where(
                ExpenseRecord.organisation_id == org_id, ExpenseRecord.project_id == project.id
            )
        )
        if expenses:
            problems.append(f"{expenses} expense record{'s' if expenses != 1 else ''}")
        children = [
            child
            for child in await session.scalars(
                select(Project.id).where(
                    Project.organisation_id == org_id, Project.parent_id == project.id
                )
            )
            if child not in deleting
        ]
        if children:
            problems.append(f"{len(children)} subproject{'s' if len(children) != 1 else ''}")
        if problems:
            raise RuleViolation(
                f'Project "{project.name}" ({project.id}) cannot be deleted: it is used by '
                + ", ".join(problems)
            )


async def _delete_projects(session: AsyncSession, org_id: str, projects: Sequence[Project]) -> None:
    ids = [project.id for project in projects]
    await session.execute(delete(ProjectManager).where(ProjectManager.project_id.in_(ids)))
    await session.execute(delete(ProjectTag).where(ProjectTag.project_id.in_(ids)))
    await session.execute(
        update(Task)
        .where(Task.organisation_id == org_id, Task.project_id.in_(ids))
        .values(project_id=None)
    )
    # Children first: a parent deleted in the same batch must not be referenced any more.
    levels = sorted(projects, key=lambda p: -p.level)
    for project in levels:
        await session.delete(project)
        await session.flush()


async def _set_archived(
    context: RequestContext, ids: Sequence[str], argument: str, archived: bool, subtree: bool
) -> list[Project]:
    require_admin(context)
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


# -- queries ---------------------------------------------------------------------------------


@query.field("getProject")
async def resolve_get_project(_root: Any, info: Any, id: str) -> Project:
    return await _project(info.context, id)


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


@query.field("getProjectCategories")
async def resolve_get_project_categories(_root: Any, info: Any) -> list[ProjectCategory]:
    context: RequestContext = info.context
    return await categories_by_name(context.session, ProjectCategory, context.org_id)


@query.field("getPotentialProjectOwners")
async def resolve_get_potential_project_owners(
    _root: Any, info: Any, projectId: str
) -> list[Person]:
    """Active people whose role may manage a project: admins and managers."""
    context: RequestContext = info.context
    await _project(context, projectId, "projectId")
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


# -- SvcProject / SvcProjectCategory fields -----------------------------------------------------


@project_type.field("category")
async def resolve_project_category(project: Project, info: Any) -> ProjectCategory:
    if project.category is not None:
        return project.category
    context: RequestContext = info.context
    return await default_project_category(context.session, context.org_id)


@project_type.field("parent")
async def resolve_project_parent(project: Project, info: Any) -> Project | None:
    if project.parent_id is None:
        return None
    context: RequestContext = info.context
    return await context.session.get(Project, project.parent_id)


@project_type.field("availability")
def resolve_project_availability(project: Project, _info: Any) -> dict[str, Any]:
    return {"value": project.availability}


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


@category_type.field("levelNames")
def resolve_category_level_names(category: ProjectCategory, _info: Any) -> list[str]:
    return list(category.level_names or [])


# -- project mutations -----------------------------------------------------------------------


@mutation.field("addProject")
async def resolve_add_project(
    _root: Any, info: Any, name: str, categoryId: str | None = None,
    parentId: str | None = None, color: str | None = None,
) -> Project:
    context: RequestContext = info.context
    require_admin(context)
    session, org_id = context.session, context.org_id
    parent = await _project(context, parentId, "parentId") if parentId is not None else None
    if parent is not None and parent.archived:
        raise BadInput("parentId", f'project "{parent.name}" is archived')
    if categoryId is not None:
        category = await get_in_org(session, ProjectCategory, org_id, categoryId, "categoryId",
                                    "project category")
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


@mutation.field("deleteProject")
async def resolve_delete_project(
    _root: Any, info: Any, id: str, check: bool | None = None
) -> Project:
    context: RequestContext = info.context
    require_admin(context)
    project = await _project(context, id)
    await _references(context.session, context.org_id, [project])
    if check:
        context.skip_audit = True
        return project
    await _delete_projects(context.session, context.org_id, [project])
    return project


@mutation.field("deleteProjects")
async def resolve_delete_projects(_root: Any, info: Any, ids: list[str]) -> list[Project]:
    context: RequestContext = info.context
    require_admin(context)
    check_unique_ids(ids, "ids")
    projects = await get_many_in_org(context.session, Project, context.org_id, ids, "ids",
                                     "project")
    await _references(context.session, context.org_id, projects)
    await _delete_projects(context.session, context.org_id, projects)
    return projects


@mutation.field("duplicateProject")
async def resolve_duplicate_project(
    _root: Any, info: Any, id: str, name: str, parentId: str | None = None
) -> Project:
    """A copy of the project (category, color, availability, managers, tags), under the same
    parent or under `parentId`."""
    context: RequestContext = info.context
    require_admin(context)
    session, org_id = context.session, context.org_id
    source = await _project(context, id)
    if parentId is not None:
        parent: Project | None = await _project(context, parentId, "parentId")
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
    project = await _project(info.context, id)
    await require_project_editor(info.context, project)
    project.name = name
    return project


@mutation.field("editProjectColor")
async def resolve_edit_project_color(
    _root: Any, info: Any, id: str, color: str | None = None
) -> Project:
    project = await _project(info.context, id)
    await require_project_editor(info.context, project)
    project.color = color
    return project


@mutation.field("editProjectAvailability")
async def resolve_edit_project_availability(
    _root: Any, info: Any, id: str, availability: bool
) -> Project:
    project = await _project(info.context, id)
    await require_project_editor(info.context, project)
    project.availability = availability
    return project


@mutation.field("editProjectParent")
async def resolve_edit_project_parent(
    _root: Any, info: Any, id: str, parentId: str | None = None
) -> Project:
    """Moves the project (and its subtree) under another parent; levels follow."""
    context: RequestContext = info.context
    require_admin(context)
    session = context.session
    project = await _project(context, id)
    parent = await _project(context, parentId, "parentId") if parentId is not None else None
    parents = await parent_map(session, Project, context.org_id)
    check_new_parent(parents, project.id, parentId, "project")
    project.parent_id = parentId
    project.level = parent.level + 1 if parent else 0
    parents[project.id] = parentId
    subtree = descendants(parents, [project.id])
    if subtree:
        loaded = {p.id: p for p in await session.scalars(
            select(Project).where(Project.id.in_(subtree))
        )}
        children = children_map(parents)
        queue = [project]
        while queue:
            current = queue.pop(0)
            for child_id in children.get(current.id, []):
                child = loaded[child_id]
                child.level = current.level + 1
                queue.append(child)
    return project


# -- project managers ------------------------------------------------------------------------


def _manager_relation(row: ProjectManager) -> dict[str, Any]:
    return raw_relation(row.id, row.person_id, "managerOf", row.project_id, "managedBy")


@mutation.field("makeManagerOfProject")
async def resolve_make_manager_of_project(
    _root: Any, info: Any, managerId: str, projectId: str
) -> dict[str, Any]:
    context: RequestContext = info.context
    require_admin(context)
    session, org_id = context.session, context.org_id
    person = await get_in_org(session, Person, org_id, managerId, "managerId", "person")
    if person.archived:
        raise BadInput("managerId", f"{person.name} is archived")
    project = await _project(context, projectId, "projectId")
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
    require_admin(context)
    session, org_id = context.session, context.org_id
    person = await get_in_org(session, Person, org_id, managerId, "managerId", "person")
    project = await _project(context, projectId, "projectId")
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
    require_admin(context)
    person = await get_in_org(context.session, Person, context.org_id, managerId, "managerId",
                              "person")
    await context.session.execute(
        delete(ProjectManager).where(
            ProjectManager.organisation_id == context.org_id,
            ProjectManager.person_id == person.id,
        )
    )
    return person


# -- project categories ----------------------------------------------------------------------


async def _category(context: RequestContext, category_id: str) -> ProjectCategory:
    return await get_in_org(context.session, ProjectCategory, context.org_id, category_id, "id",
                            "project category")


@mutation.field("addProjectCategory")
async def resolve_add_project_category(_root: Any, info: Any, name: str) -> ProjectCategory:
    context: RequestContext = info.context
    require_admin(context)
    category = ProjectCategory(organisation_id=context.org_id, name=name, level_names=[])
    context.session.add(category)
    await context.session.flush()
    return category


@mutation.field("deleteProjectCategory")
async def resolve_delete_project_category(_root: Any, info: Any, id: str) -> ProjectCategory:
    context: RequestContext = info.context
    require_admin(context)
    category = await _category(context, id)
    used = await context.session.scalar(
        select(func.count()).select_from(Project).where(
            Project.organisation_id == context.org_id, Project.category_id == category.id
        )
    )
    if used:
        raise RuleViolation(
            f'Project category "{category.name}" cannot be deleted: {used} project'
            f"{'s' if used != 1 else ''} belong{'s' if used == 1 else ''} to it"
        )
    await context.session.delete(category)
    return category


@mutation.field("editProjectCategoryName")
async def resolve_edit_project_category_name(
    _root: Any, info: Any, id: str, name: str
) -> ProjectCategory:
    context: RequestContext = info.context
    require_admin(context)
    category = await _category(context, id)
    category.name = name
    return category


@mutation.field("editProjectCategoryLevelNames")
async def resolve_edit_project_category_level_names(
    _root: Any, info: Any, id: str, levelNames: list[str | None] | None = None
) -> ProjectCategory:
    context: RequestContext = info.context
    require_admin(context)
    category = await _category(context, id)
    category.level_names = _check_level_names(levelNames)
    return category


BINDABLES = [query, mutation, project_type, category_type]
