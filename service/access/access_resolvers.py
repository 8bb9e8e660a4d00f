"""Access (assignments): the account's "show by default" switches, the "Who has access?"
lists (assign|unassign{Project,SubProject,AbsenceType,ExpenseType,ScheduleType,CustomField}
To{Person,Tag}, and reset<Member><Items>Relations, which removes one member's links of one
row of the table), expense types limited to projects, custom fields assigned to projects,
tasks and time records, subprojects offered under another project, the tags a task is offered
to (potential owners by tag), getAvailableSubProjects and getAvailableAbsenceTypes. The table
of links is service/access/links.py; service/access/link_reads_resolvers.py reads them back.

Every mutation is the administrators'. Assigning is idempotent (a retry, or a second process
doing the same, returns the existing link); unassigning a link that does not exist is
refused naming the argument. The rule itself is `service.access.rules.has_access`.
"""

from __future__ import annotations

from typing import Any

from ariadne import MutationType, ObjectType, QueryType
from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError

from service.access import permissions
from service.access.items import AVAILABILITY_KEY, access_defaults, accessible_ids
from service.access.links import LINKS, MEMBER_COLUMNS, MEMBER_MODELS, Link
from service.access.models import ProjectAccess
from service.access.rules import SWITCHES
from service.errors import BadInput, PermissionDenied
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import AbsenceType, Organisation, Person, Project, ProjectSubProject
from service.structure import descendants, parent_map, raw_relation

require_permission = permissions.requirer(permissions.PROJECTS)

query = QueryType()
mutation = MutationType()
organisation_type = ObjectType("SvcOrganisation")


# -- the account's switches -------------------------------------------------------------------


@organisation_type.field("availability")
def resolve_availability(organisation: Organisation, _info: Any) -> dict[str, bool]:
    return access_defaults(organisation).as_dict()


def _bind_switch(switch: str, operation: str) -> None:
    @mutation.field(operation)
    async def resolve_switch(_root: Any, info: Any, available: bool) -> Organisation:
        context: RequestContext = info.context
        require_permission(context, "change what is shown by default")
        organisation = context.organisation
        settings = dict(organisation.settings or {})
        settings[AVAILABILITY_KEY] = {
            **access_defaults(organisation).as_dict(), switch: bool(available)
        }
        organisation.settings = settings
        return organisation


for _switch, _operation in SWITCHES.items():
    _bind_switch(_switch, _operation)


# -- "Who has access?" lists ------------------------------------------------------------------


async def _load(context: RequestContext, link: Link, kwargs: dict[str, Any]) -> tuple[Any, Any]:
    member_model, member_label = MEMBER_MODELS[link.member_argument]
    member = await get_in_org(context.session, member_model, context.org_id,
                              kwargs[link.member_argument], link.member_argument, member_label)
    item = await get_in_org(context.session, link.item_model, context.org_id,
                            kwargs[link.item_argument], link.item_argument, link.item_label)
    if link.item_argument == "subProjectId" and item.parent_id is None:
        raise BadInput("subProjectId", f"the project {item.name} is not a subproject")
    if item.id == member.id:
        raise BadInput(link.item_argument, f"{item.name} cannot be linked to itself")
    return member, item


def _where(link: Link, member: Any, item: Any) -> list[Any]:
    model = link.row_model
    member_column = getattr(model, MEMBER_COLUMNS[link.member_argument])
    return [
        model.organisation_id == item.organisation_id,
        getattr(model, link.item_column) == item.id,
        member_column == member.id,
    ]


def _relation(link: Link, row: Any, member: Any, item: Any) -> dict[str, Any]:
    return raw_relation(row.id, member.id, link.source_key, item.id, link.target_key)


# Who has access to an item is edited with the permission of the item's kind.
_ITEM_PERMISSIONS = {"absenceTypeId": permissions.SETTINGS,
                     "expenseTypeId": permissions.EXPENSES,
                     "scheduleTypeId": permissions.SETTINGS,
                     "customFieldId": permissions.SETTINGS}


def _require_for(context: RequestContext, link: Link) -> None:
    permission = link.permission or _ITEM_PERMISSIONS.get(link.item_argument,
                                                          permissions.PROJECTS)
    permissions.require(context, permission, "edit who has access")


def _bind_link(link: Link) -> None:
    @mutation.field(link.assign)
    async def resolve_assign(_root: Any, info: Any, **kwargs: Any) -> dict[str, Any]:
        context: RequestContext = info.context
        _require_for(context, link)
        session = context.session
        member, item = await _load(context, link, kwargs)
        if getattr(member, "archived", False) and link.member_argument == "personId":
            raise BadInput("personId", f"{member.name} is archived")
        row = (await session.scalars(select(link.row_model).where(*_where(link, member, item)))
               ).first()
        if row is None:
            values = {
                "organisation_id": context.org_id,
                link.item_column: item.id,
                MEMBER_COLUMNS[link.member_argument]: member.id,
            }
            if hasattr(link.row_model, "member_id"):
                values["member_id"] = member.id
            row = link.row_model(**values)
            try:
                async with session.begin_nested():
                    session.add(row)
                    await session.flush()
            except IntegrityError:  # another request stored the same link meanwhile
                row = (await session.scalars(
                    select(link.row_model).where(*_where(link, member, item))
                )).one()
        return _relation(link, row, member, item)

    @mutation.field(link.unassign)
    async def resolve_unassign(_root: Any, info: Any, **kwargs: Any) -> dict[str, Any]:
        context: RequestContext = info.context
        _require_for(context, link)
        session = context.session
        member, item = await _load(context, link, kwargs)
        row = (await session.scalars(select(link.row_model).where(*_where(link, member, item)))
               ).first()
        if row is None:
            who = getattr(member, "name", f"the {MEMBER_MODELS[link.member_argument][1]}")
            raise BadInput(link.member_argument,
                           f"{who} is not assigned to the {link.item_label} {item.name}")
        relation = _relation(link, row, member, item)
        await session.delete(row)
        return relation

    if link.reset is not None:
        mutation.set_field(link.reset, _resetter(link))


def _resetter(link: Link) -> Any:
    """reset<Member><Items>Relations: every link of the member in this row of the table (a
    project's list and a subproject's share one table: each reset keeps the other's)."""
    model = link.row_model
    member_model, member_label = MEMBER_MODELS[link.member_argument]

    async def resolve_reset(_root: Any, info: Any, **kwargs: Any) -> Any:
        context: RequestContext = info.context
        _require_for(context, link)
        member = await get_in_org(context.session, member_model, context.org_id,
                                  kwargs[link.member_argument], link.member_argument,
                                  member_label)
        rows = select(model.id).where(
            model.organisation_id == context.org_id,
            getattr(model, MEMBER_COLUMNS[link.member_argument]) == member.id)
        if model is ProjectAccess:
            parent = Project.parent_id
            rows = rows.join(Project, Project.id == model.project_id).where(
                parent.isnot(None) if link.item_argument == "subProjectId" else parent.is_(None))
        ids = list(await context.session.scalars(rows))
        if ids:
            await context.session.execute(delete(model).where(model.id.in_(ids)))
        return member

    return resolve_reset


for _link in LINKS:
    _bind_link(_link)


# -- what a person may use --------------------------------------------------------------------


async def _person_for(context: RequestContext, person_id: str) -> Person:
    person = await get_in_org(context.session, Person, context.org_id, person_id, "personId",
                              "person")
    if not await context.can_access_person_data(person.id):
        raise PermissionDenied("you may not see what this person may use")
    return person


@query.field("getAvailableSubProjects")
async def resolve_get_available_sub_projects(
    _root: Any, info: Any, projectId: str, personId: str
) -> list[Project]:
    context: RequestContext = info.context
    session = context.session
    project = await get_in_org(session, Project, context.org_id, projectId, "projectId",
                               "project")
    person = await _person_for(context, personId)
    parents = await parent_map(session, Project, context.org_id)
    # Its own subprojects and those offered under it (assignSubProjectToProject), all levels.
    offered = list(await session.scalars(select(ProjectSubProject.sub_project_id).where(
        ProjectSubProject.organisation_id == context.org_id,
        ProjectSubProject.project_id == project.id)))
    below = set(descendants(parents, [project.id, *offered])) | set(offered)
    below.discard(project.id)
    allowed = below & await accessible_ids(session, context.organisation, person.id, "project")
    if not allowed:
        return []
    rows = await session.scalars(
        select(Project).where(Project.id.in_(sorted(allowed)), Project.archived.is_(False))
    )
    return sorted(rows, key=lambda p: (p.name.lower(), p.id))


@query.field("getAvailableAbsenceTypes")
async def resolve_get_available_absence_types(
    _root: Any, info: Any, personId: str
) -> list[AbsenceType]:
    context: RequestContext = info.context
    session = context.session
    person = await _person_for(context, personId)
    allowed = await accessible_ids(session, context.organisation, person.id, "absenceType")
    if not allowed:
        return []
    rows = await session.scalars(
        select(AbsenceType).where(
            AbsenceType.id.in_(sorted(allowed)), AbsenceType.archived.is_(False)
        )
    )
    return sorted(rows, key=lambda a: (a.name.lower(), a.id))


BINDABLES = [query, mutation, organisation_type]
