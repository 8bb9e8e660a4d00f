"""Access to projects, absence types and expense types, read from the database.

Loads the items' "Who has access?" lists and the account's switches, and asks the pure rule
(`service.access.rules.has_access`). Used where time and expenses are recorded (the owner
must have access: `check_owner_access`, `check_expense_access`), by the lists a non-admin
reads (`accessible_ids`) and by getAvailableSubProjects / getAvailableAbsenceTypes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from service.access.models import (
    AbsenceTypeAccess,
    ExpenseTypeAccess,
    ExpenseTypeProject,
    ProjectAccess,
)
from service.access.project_managers import managed_project_ids
from service.access.rules import AccessDefaults, AccessItem, ItemKind, has_access
from service.access.tag_members import person_tag_ids
from service.errors import RuleViolation
from service.graphql.context import RequestContext
from service.models import AbsenceType, ExpenseType, Organisation, Person, Project
from service.structure import ancestors, parent_map

AVAILABILITY_KEY = "availability"


def access_defaults(organisation: Organisation) -> AccessDefaults:
    """The account's "show by default" switches."""
    return AccessDefaults.from_settings((organisation.settings or {}).get(AVAILABILITY_KEY))


# Item id -> the people and the tags on its "Who has access?" list.
Members = Mapping[str, tuple[set[str], set[str]]]


def _members(rows: Iterable[Any], item_column: str) -> dict[str, tuple[set[str], set[str]]]:
    lists: dict[str, tuple[set[str], set[str]]] = {}
    for row in rows:
        people, tags = lists.setdefault(getattr(row, item_column), (set(), set()))
        if row.person_id is not None:
            people.add(row.person_id)
        if row.tag_id is not None:
            tags.add(row.tag_id)
    return lists


_PROJECT_COLUMNS = (Project.id, Project.name, Project.parent_id, Project.availability)
_PROJECT_MEMBERS = (ProjectAccess.project_id, ProjectAccess.person_id, ProjectAccess.tag_id)
# Built once (the ids and the organisation are parameters). The ancestors are loaded whole:
# the checks that follow (e.g. the projects' schedule settings) find them in the session.
_PROJECTS_BY_IDS = select(Project).where(
    Project.organisation_id == bindparam("org_id"),
    Project.id.in_(bindparam("ids", expanding=True)),
)
_MEMBERS_OF_PROJECTS = select(*_PROJECT_MEMBERS).where(
    ProjectAccess.organisation_id == bindparam("org_id"),
    ProjectAccess.project_id.in_(bindparam("ids", expanding=True)),
)


async def _projects_with_ancestors(
    session: AsyncSession, org_id: str, ids: Iterable[str], known: Iterable[Project] = ()
) -> list[Project]:
    """Those projects and all their ancestors (one query per level); `known`: projects
    already loaded (not read again)."""
    found: dict[str, Project] = {project.id: project for project in known}
    wanted = set(ids) - set(found)
    wanted |= {p.parent_id for p in found.values() if p.parent_id is not None} - set(found)
    while wanted:
        rows = list(await session.scalars(
            _PROJECTS_BY_IDS, {"org_id": org_id, "ids": sorted(wanted)}
        ))
        found.update((row.id, row) for row in rows)
        wanted = {row.parent_id for row in rows if row.parent_id is not None} - set(found)
    return list(found.values())


async def project_items(
    session: AsyncSession, org_id: str, ids: Iterable[str] | None = None,
    known: Iterable[Project] = (), known_members: Members | None = None,
) -> dict[str, AccessItem]:
    """Every project of the organisation as an AccessItem (subprojects carry their parent);
    with `ids`, only those projects and their ancestors (what deciding on them needs; those in
    `known` are not read again, nor the lists of those in `known_members`)."""
    projects: Sequence[Any]
    if ids is None:
        projects = (await session.execute(
            select(*_PROJECT_COLUMNS).where(Project.organisation_id == org_id)
        )).all()
        lists = _members(await session.execute(
            select(*_PROJECT_MEMBERS).where(ProjectAccess.organisation_id == org_id)
        ), "project_id")
    else:
        projects = await _projects_with_ancestors(session, org_id, ids, known)
        lists = dict(known_members or {})
        unread = sorted(row.id for row in projects if row.id not in lists)
        if unread:
            lists.update(_members(await session.execute(
                _MEMBERS_OF_PROJECTS, {"org_id": org_id, "ids": unread}
            ), "project_id"))
    by_id = {row.id: row for row in projects}
    items: dict[str, AccessItem] = {}

    def build(project_id: str, seen: frozenset[str]) -> AccessItem:
        if project_id in items:
            return items[project_id]
        row = by_id[project_id]
        parent = None
        if row.parent_id in by_id and row.parent_id not in seen:
            parent = build(row.parent_id, seen | {project_id})
        people, tags = lists.get(project_id, (set(), set()))
        item = AccessItem("project", row.id, row.name, frozenset(people), frozenset(tags),
                          row.availability, parent)
        items[project_id] = item
        return item

    for project_id in by_id:
        build(project_id, frozenset())
    return items


async def type_items(
    session: AsyncSession, org_id: str, kind: ItemKind, ids: Sequence[str] | None = None
) -> dict[str, AccessItem]:
    """Absence types or expense types (all, or those of `ids`) as AccessItems."""
    model: Any = AbsenceType if kind == "absenceType" else ExpenseType
    access: Any = AbsenceTypeAccess if kind == "absenceType" else ExpenseTypeAccess
    column = "absence_type_id" if kind == "absenceType" else "expense_type_id"
    types = select(model.id, model.name).where(model.organisation_id == org_id)
    members = select(getattr(access, column), access.person_id, access.tag_id).where(
        access.organisation_id == org_id
    )
    if ids is not None:
        types = types.where(model.id.in_(list(ids)))
        members = members.where(getattr(access, column).in_(list(ids)))
    lists = _members(await session.execute(members), column)
    items = {}
    for row in await session.execute(types):
        people, tags = lists.get(row.id, (set(), set()))
        items[row.id] = AccessItem(kind, row.id, row.name, frozenset(people), frozenset(tags))
    return items


async def _tags(session: AsyncSession, org_id: str, person_id: str) -> frozenset[str]:
    return frozenset(await person_tag_ids(session, org_id, person_id))


async def accessible_ids(
    session: AsyncSession, organisation: Organisation, person_id: str, kind: ItemKind
) -> set[str]:
    """Ids of the items of that kind the person may use."""
    items = (
        await project_items(session, organisation.id)
        if kind == "project"
        else await type_items(session, organisation.id, kind)
    )
    tags = await _tags(session, organisation.id, person_id)
    defaults = access_defaults(organisation)
    return {key for key, item in items.items() if has_access(item, person_id, tags, defaults)}


async def listable_project_ids(context: RequestContext) -> set[str] | None:
    """The projects a non-admin's lists show: those they may use and those they manage.
    None (no restriction) for an administrator, or when every project is open to them."""
    if context.is_admin:
        return None
    session, organisation = context.session, context.organisation
    items = await project_items(session, organisation.id)
    tags = await _tags(session, organisation.id, context.person.id)
    defaults = access_defaults(organisation)
    allowed = {key for key, item in items.items()
               if has_access(item, context.person.id, tags, defaults)}
    if len(allowed) == len(items):
        return None
    return allowed | await managed_project_ids(session, organisation.id, context.person.id)


def _refusal(owner: Person, item: AccessItem) -> RuleViolation:
    return RuleViolation(f"{owner.name} has no access to {item.label}")


def _lists_tags(item: AccessItem | None) -> bool:
    """Whether a tag is on the list of the item or of one of its ancestors: only then do the
    person's tags make a difference to `has_access`."""
    while item is not None:
        if item.tag_ids:
            return True
        item = item.parent
    return False


async def check_owner_access(
    session: AsyncSession,
    organisation: Organisation,
    owner: Person,
    *,
    projects: Iterable[Project] = (),
    absences: Iterable[AbsenceType | None] = (),
    loaded: Iterable[Project] = (),
    members: Members | None = None,
) -> None:
    """RuleViolation naming the item when the owner of a time record may not use one of its
    projects or its absence type. `loaded`: other projects already read (ancestors of these,
    not read again); `members`: the "Who has access?" lists already read, by project id. The
    owner's tags are read only when a list to decide on names a tag."""
    projects = list(projects)
    project_ids = list(dict.fromkeys(project.id for project in projects))
    absence_ids = list(dict.fromkeys(a.id for a in absences if a is not None))
    if not project_ids and not absence_ids:
        return
    defaults = access_defaults(organisation)
    tags: frozenset[str] | None = None

    async def check(item: AccessItem) -> None:
        nonlocal tags
        if tags is None and _lists_tags(item):
            tags = await _tags(session, organisation.id, owner.id)
        if not has_access(item, owner.id, tags or frozenset(), defaults):
            raise _refusal(owner, item)

    if project_ids:
        items = await project_items(session, organisation.id, project_ids,
                                    [*projects, *loaded], members)
        for project_id in project_ids:
            await check(items[project_id])
    if absence_ids:
        types = await type_items(session, organisation.id, "absenceType", absence_ids)
        for absence_id in absence_ids:
            await check(types[absence_id])


async def check_expense_access(
    session: AsyncSession,
    organisation: Organisation,
    owner: Person | None,
    expense_type: ExpenseType,
    project: Project | None,
) -> None:
    """RuleViolation when the owner may not use the expense type or the project, or when the
    expense type is limited to projects that do not include this one (or an ancestor)."""
    org_id = organisation.id
    if owner is not None:
        defaults = access_defaults(organisation)
        tags = await _tags(session, org_id, owner.id)
        item = (await type_items(session, org_id, "expenseType", [expense_type.id]))[
            expense_type.id
        ]
        if not has_access(item, owner.id, tags, defaults):
            raise _refusal(owner, item)
        if project is not None:
            items = await project_items(session, org_id, [project.id], [project])
            if not has_access(items[project.id], owner.id, tags, defaults):
                raise _refusal(owner, items[project.id])
    limited = set(
        await session.scalars(
            select(ExpenseTypeProject.project_id).where(
                ExpenseTypeProject.organisation_id == org_id,
                ExpenseTypeProject.expense_type_id == expense_type.id,
            )
        )
    )
    if not limited:
        return
    if project is None:
        raise RuleViolation(
            f"the expense type {expense_type.name} is limited to projects: name a project"
        )
    parents = await parent_map(session, Project, org_id)
    if limited.isdisjoint({project.id, *ancestors(parents, project.id)}):
        raise RuleViolation(
            f"the expense type {expense_type.name} is not available on the project {project.name}"
        )
