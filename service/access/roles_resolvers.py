"""Roles and their permissions: getRole, getRoles, countRoles, getGlobalAuthorisations,
addRole, duplicateRole, editRoleName, editRoleColor, editRoleAuthorisations,
archiveRole(s), unarchiveRole(s), deleteRole; `SvcRole.authorisations` and `.persons`.

Everyone reads roles; administrators (the admin kind) alone edit them: a permission to grant
permissions would be every permission. The catalogue and its checks are
service/access/permissions.py.
A role made by addRole is a custom one (no rights but its authorisations); duplicateRole
keeps the original's kind. A role is deleted only while nobody holds it, and an organisation
keeps one role of each built-in kind (people are added and imported by kind).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ariadne import MutationType, ObjectType, QueryType
from sqlalchemy import func, select

from service.access import permissions
from service.errors import BadInput, RuleViolation
from service.graphql.context import RequestContext
from service.graphql.filters import filter_clause
from service.lookup import get_in_org, get_many_in_org
from service.models import ROLE_CUSTOM, ROLE_KINDS, Person, Role
from service.structure import (
    active_clause,
    bind_flat_archiving,
    bind_listing,
    check_unique_ids,
    name_contains,
    require_admin,
)

query = QueryType()
mutation = MutationType()
role_type = ObjectType("SvcRole")

MAX_ROLES = 500  # per organisation: a custom role is a handful of rows' worth, not a list


async def _role(context: RequestContext, role_id: str, argument: str = "id",
                for_update: bool = False) -> Role:
    return await get_in_org(context.session, Role, context.org_id, role_id, argument, "role",
                            for_update=for_update)


def _parse_authorisations(items: Sequence[dict[str, Any] | None]) -> dict[str, Any]:
    """{name: {"view": [...], "manage": [...]}} of SvcAuthorisationInput items, each name
    of the catalogue once, each target one the catalogue offers."""
    parsed: dict[str, Any] = {}
    for index, item in enumerate(items):
        where = f"authorisations[{index}]"
        if item is None:
            raise BadInput(where, "must not be null")
        name = str(item.get("name") or "").strip()
        if name not in permissions.BY_NAME:
            raise BadInput(f"{where}.name", f"unknown permission {name[:64]!r}; known: "
                           f"{', '.join(permissions.NAMES)}")
        if name in parsed:
            raise BadInput(f"{where}.name", f"{name!r} is listed twice")
        lists: dict[str, list[str]] = {}
        for level in ("view", "manage"):
            values = item.get(level) or []
            for position, value in enumerate(values):
                if value not in permissions.TARGETS:
                    raise BadInput(f"{where}.{level}[{position}]",
                                   f"must be one of {', '.join(permissions.TARGETS)}")
            lists[level] = sorted(set(values))
        parsed[name] = lists
    return parsed


def _listed(role: Role) -> list[dict[str, Any]]:
    """The role's own authorisations (what editRoleAuthorisations set), by name."""
    return [{"name": name, "targets": list(permissions.TARGETS),
             "view": list(value.get("view") or []), "manage": list(value.get("manage") or [])}
            for name, value in sorted((role.authorisations or {}).items())]


@role_type.field("authorisations")
def resolve_role_authorisations(role: Role, _info: Any) -> list[dict[str, Any]]:
    return _listed(role)


@role_type.field("persons")
async def resolve_role_persons(role: Role, info: Any) -> list[Person]:
    context: RequestContext = info.context
    rows = await context.session.scalars(
        select(Person).where(Person.organisation_id == context.org_id, Person.role_id == role.id)
        .order_by(Person.name, Person.id)
    )
    return list(rows.unique())


# -- queries ---------------------------------------------------------------------------------


@query.field("getRole")
async def resolve_get_role(_root: Any, info: Any, id: str) -> Role:
    return await _role(info.context, id)


async def _role_select(context: RequestContext, args: dict[str, Any]) -> Any:
    conditions = {
        "id": lambda value: Role.id == value,
        "name": lambda value: name_contains(Role.name, value),
        "archived": lambda value: Role.archived.is_(bool(value)),
    }
    statement = select(Role).where(
        Role.organisation_id == context.org_id, filter_clause(args.get("filter"), conditions)
    )
    active = active_clause(Role.archived, args.get("archived"), args.get("filter"))
    if active is not None:
        statement = statement.where(active)
    return statement.order_by(Role.name, Role.id)


bind_listing(query, Role.id, _role_select, get="getRoles", count="countRoles", ids=None)


@query.field("getGlobalAuthorisations")
def resolve_global_authorisations(_root: Any, info: Any) -> list[dict[str, Any]]:
    """Every permission of the catalogue, with what the caller's role has of it."""
    context: RequestContext = info.context
    return permissions.effective(context.person.role)


# -- mutations -------------------------------------------------------------------------------


def _name(name: str) -> str:
    if not name.strip():
        raise BadInput("name", "must not be blank")
    return name.strip()


async def _check_room(context: RequestContext) -> None:
    count = await context.session.scalar(
        select(func.count()).select_from(Role).where(Role.organisation_id == context.org_id))
    if (count or 0) >= MAX_ROLES:
        raise RuleViolation(f"an organisation has at most {MAX_ROLES} roles")


@mutation.field("addRole")
async def resolve_add_role(
    _root: Any, info: Any, name: str, authorisations: list[dict[str, Any] | None],
    color: str | None = None,
) -> Role:
    context: RequestContext = info.context
    require_admin(context, "add roles")
    parsed = _parse_authorisations(authorisations)
    await _check_room(context)
    role = Role(organisation_id=context.org_id, name=_name(name), kind=ROLE_CUSTOM,
                archived=False, color=color, authorisations=parsed)
    context.session.add(role)
    await context.session.flush()
    return role


@mutation.field("duplicateRole")
async def resolve_duplicate_role(_root: Any, info: Any, id: str, name: str) -> Role:
    context: RequestContext = info.context
    require_admin(context, "duplicate roles")
    original = await _role(context, id)
    await _check_room(context)
    role = Role(organisation_id=context.org_id, name=_name(name), kind=original.kind,
                archived=False, color=original.color,
                authorisations=dict(original.authorisations or {}))
    context.session.add(role)
    await context.session.flush()
    return role


@mutation.field("editRoleName")
async def resolve_edit_role_name(_root: Any, info: Any, id: str, name: str) -> Role:
    context: RequestContext = info.context
    require_admin(context, "edit roles")
    role = await _role(context, id, for_update=True)
    role.name = _name(name)
    return role


@mutation.field("editRoleColor")
async def resolve_edit_role_color(_root: Any, info: Any, id: str, color: str | None = None
                                  ) -> Role:
    context: RequestContext = info.context
    require_admin(context, "edit roles")
    role = await _role(context, id, for_update=True)
    role.color = color
    return role


@mutation.field("editRoleAuthorisations")
async def resolve_edit_role_authorisations(
    _root: Any, info: Any, id: str, authorisations: list[dict[str, Any] | None]
) -> Role:
    """Replaces the role's authorisations (the catalogue: service/access/permissions.py). An
    administrator's role has every permission whatever it says."""
    context: RequestContext = info.context
    require_admin(context, "edit roles")
    # Locked: two concurrent replacements run one after the other.
    role = await _role(context, id, for_update=True)
    role.authorisations = _parse_authorisations(authorisations)
    return role


async def _holders(context: RequestContext, role_ids: Sequence[str]) -> int:
    count = await context.session.scalar(
        select(func.count()).select_from(Person).where(
            Person.organisation_id == context.org_id, Person.role_id.in_(role_ids)))
    return int(count or 0)


async def _check_kind_kept(context: RequestContext, role: Role, what: str) -> None:
    """An organisation keeps an active role of each built-in kind."""
    if role.kind not in ROLE_KINDS:
        return
    others = await context.session.scalar(
        select(func.count()).select_from(Role).where(
            Role.organisation_id == context.org_id, Role.kind == role.kind,
            Role.id != role.id, Role.archived.is_(False)))
    if not others:
        raise RuleViolation(f'Role "{role.name}" ({role.id}) cannot be {what}: it is the '
                            f"organisation's only active {role.kind} role")


async def _set_archived(context: RequestContext, ids: Sequence[str], argument: str,
                        archived: bool) -> list[Role]:
    require_admin(context, "archive roles")
    check_unique_ids(list(ids), argument)
    roles = await get_many_in_org(context.session, Role, context.org_id, ids, argument, "role")
    for role in roles:
        if archived and not role.archived:
            await _check_kind_kept(context, role, "archived")
        role.archived = archived
        await context.session.flush()
    return roles


# Not bind_archiving: archiveRole answers the role itself, and a role has no subtree.
bind_flat_archiving(mutation, _set_archived, "Role")


@mutation.field("deleteRole")
async def resolve_delete_role(_root: Any, info: Any, id: str) -> Role:
    """Refused while people hold the role (saying how many)."""
    context: RequestContext = info.context
    require_admin(context, "delete roles")
    role = await _role(context, id, for_update=True)
    held = await _holders(context, [role.id])
    if held:
        people = "1 person holds" if held == 1 else f"{held} people hold"
        raise RuleViolation(f'Role "{role.name}" ({role.id}) cannot be deleted: {people} it; '
                            "give them another role first")
    if not role.archived:
        await _check_kind_kept(context, role, "deleted")
    await context.session.delete(role)
    await context.session.flush()
    return role


BINDABLES = [query, mutation, role_type]
