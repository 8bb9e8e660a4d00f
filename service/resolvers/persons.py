"""People, roles and people managers.

Everyone in the organisation may read people and roles; adding, editing, archiving and
deleting people and making someone a people manager are for administrators (a person may
change their own interface language). An organisation always keeps one active administrator.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ariadne import MutationType, ObjectType, QueryType
from sqlalchemy import Select, and_, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql.elements import ColumnElement

from service import rate_limit
from service.errors import BadInput, PermissionDenied, RuleViolation
from service.graphql.context import RequestContext
from service.graphql.filters import filter_clause
from service.lookup import get_in_org, get_many_in_org
from service.models import (
    ExpenseRecord,
    Person,
    PersonManager,
    PersonTag,
    Role,
    TimeRecord,
)
from service.models.person import ROLE_ADMIN
from service.structure import active_clause, check_unique_ids, name_contains, raw_relation
from service.timerecords_query import tag_subtree

query = QueryType()
mutation = MutationType()
person_type = ObjectType("SvcPerson")
relations_type = ObjectType("SvcPersonRelations")
manager_of_type = ObjectType("SvcPersonManagerOf")

_LANG_RE = re.compile(r"^[a-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})?$")


def require_admin(context: RequestContext, what: str = "edit people") -> None:
    if not context.is_admin:
        raise PermissionDenied(f"only an administrator may {what}")


# Queries ---------------------------------------------------------------------------------


def _person_conditions(org_id: str) -> dict[str, Any]:
    def tagged(tag_ids: Sequence[str | None]) -> ColumnElement[bool]:
        return Person.id.in_(
            select(PersonTag.person_id).where(
                PersonTag.organisation_id == org_id,
                PersonTag.tag_id.in_(tag_subtree(org_id, tag_ids)),
            )
        )

    return {
        "id": lambda value: Person.id == value,
        "notId": lambda value: Person.id != value,
        "roleId": lambda value: Person.role_id == value,
        "name": lambda value: name_contains(Person.name, value),
        "archived": lambda value: Person.archived.is_(bool(value)),
        "tagIds": tagged,
        "notTagIds": lambda value: ~tagged(value),
    }


def _persons_statement(
    context: RequestContext,
    filter: Sequence[Mapping[str, Any] | None] | None,
    archived: bool | None,
) -> Select[Person]:
    statement = select(Person).where(
        Person.organisation_id == context.org_id,
        filter_clause(filter, _person_conditions(context.org_id)),
    )
    active = active_clause(Person.archived, archived)
    if active is not None:
        statement = statement.where(active)
    return statement


@query.field("getPerson")
async def resolve_get_person(_root: Any, info: Any, id: str) -> Person:
    context: RequestContext = info.context
    return await get_in_org(context.session, Person, context.org_id, id, "id", "person")


@query.field("getPersons")
async def resolve_get_persons(
    _root: Any, info: Any, filter: Any = None, archived: bool | None = None
) -> list[Person]:
    context: RequestContext = info.context
    statement = _persons_statement(context, filter, archived).order_by(
        func.lower(Person.name), Person.id
    )
    return list((await context.session.scalars(statement)).unique())


@query.field("countPersons")
async def resolve_count_persons(
    _root: Any, info: Any, filter: Any = None, archived: bool | None = None
) -> int:
    context: RequestContext = info.context
    inner = _persons_statement(context, filter, archived).with_only_columns(Person.id)
    count = await context.session.scalar(select(func.count()).select_from(inner.subquery()))
    return int(count or 0)


@query.field("filterPersonIds")
async def resolve_filter_person_ids(
    _root: Any, info: Any, filter: Any = None, archived: bool | None = None
) -> list[str]:
    context: RequestContext = info.context
    statement = (
        _persons_statement(context, filter, archived)
        .with_only_columns(Person.id)
        .order_by(func.lower(Person.name), Person.id)
    )
    return list(await context.session.scalars(statement))


@query.field("getRoles")
async def resolve_get_roles(
    _root: Any, info: Any, filter: Any = None, archived: bool | None = None
) -> list[Role]:
    context: RequestContext = info.context
    conditions = {
        "id": lambda value: Role.id == value,
        "name": lambda value: name_contains(Role.name, value),
        "archived": lambda value: Role.archived.is_(bool(value)),
    }
    statement = select(Role).where(
        Role.organisation_id == context.org_id, filter_clause(filter, conditions)
    )
    active = active_clause(Role.archived, archived)
    if active is not None:
        statement = statement.where(active)
    statement = statement.order_by(Role.name, Role.id)
    return list(await context.session.scalars(statement))


# Helpers of the mutations ----------------------------------------------------------------


async def _person(context: RequestContext, person_id: str, argument: str = "id") -> Person:
    return await get_in_org(context.session, Person, context.org_id, person_id, argument, "person")


async def _role(context: RequestContext, role_id: str, argument: str = "roleId") -> Role:
    role = await get_in_org(context.session, Role, context.org_id, role_id, argument, "role")
    if role.archived:
        raise BadInput(argument, f"the role {role.name!r} is archived")
    return role


async def _check_email_free(
    context: RequestContext, email: str, except_id: str | None = None, argument: str = "email"
) -> None:
    statement = select(Person.id).where(
        Person.organisation_id == context.org_id, Person.email == email
    )
    if except_id is not None:
        statement = statement.where(Person.id != except_id)
    if (await context.session.scalars(statement.limit(1))).first() is not None:
        raise BadInput(argument, f"another person of the organisation already uses {email!r}")


async def _ensure_an_admin_remains(
    context: RequestContext, leaving_ids: set[str], verb: str
) -> None:
    """Refuses a change that would leave the organisation without an active administrator."""
    statement = (
        select(func.count())
        .select_from(Person)
        .join(Role, Role.id == Person.role_id)
        .where(
            Person.organisation_id == context.org_id,
            Person.archived.is_(False),
            Role.kind == ROLE_ADMIN,
        )
    )
    if leaving_ids:
        statement = statement.where(Person.id.not_in(leaving_ids))
    if int(await context.session.scalar(statement) or 0) == 0:
        raise RuleViolation(
            f"cannot {verb}: the organisation must keep at least one active administrator"
        )


def _is_active_admin(person: Person) -> bool:
    return not person.archived and person.role.kind == ROLE_ADMIN


async def _reference_counts(context: RequestContext, person_id: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for label, model in (("time record", TimeRecord), ("expense record", ExpenseRecord)):
        count = await context.session.scalar(
            select(func.count())
            .select_from(model)
            .where(
                model.organisation_id == context.org_id,
                model.person_id == person_id,
            )
        )
        if count:
            counts[label] = int(count)
    return counts


async def _free_copy_email(context: RequestContext, email: str) -> str:
    """`local+copyN@domain` with the first N that no person of the organisation uses."""
    local, _, domain = email.partition("@")
    base = local.split("+", 1)[0]
    used = set(
        await context.session.scalars(
            select(Person.email).where(
                Person.organisation_id == context.org_id,
                Person.email.like(f"{base}+copy%@{domain}"),
            )
        )
    )
    number = 1
    while f"{base}+copy{number}@{domain}" in used:
        number += 1
    return f"{base}+copy{number}@{domain}"


# Mutations -------------------------------------------------------------------------------


@mutation.field("addPerson")
async def resolve_add_person(
    _root: Any, info: Any, name: str, email: str, roleId: str, color: str | None = None
) -> Person:
    context: RequestContext = info.context
    require_admin(context, "add people")
    role = await _role(context, roleId)
    await _check_email_free(context, email)
    await rate_limit.count_durable(context.session, rate_limit.ADDING_PEOPLE, context.org_id,
                                   context.person.id, context.now_ms)
    person = Person(
        organisation_id=context.org_id,
        name=name,
        email=email,
        role_id=role.id,
        color=color,
        start_date_ms=context.now_ms,
        created_ms=context.now_ms,
        settings={},
    )
    person.role = role
    context.session.add(person)
    await context.session.flush()
    return person


@mutation.field("deletePerson")
async def resolve_delete_person(
    _root: Any, info: Any, id: str, check: bool | None = None
) -> Person:
    """Deletion is refused while time or expense records reference the person (archive them
    instead); `check: true` runs the same validation and changes nothing."""
    context: RequestContext = info.context
    require_admin(context, "delete people")
    person = await _person(context, id)
    if person.id == context.person.id:
        raise BadInput("id", "you cannot delete yourself")
    counts = await _reference_counts(context, person.id)
    if counts:
        listed = " and ".join(f"{n} {label}{'s' if n > 1 else ''}" for label, n in counts.items())
        raise RuleViolation(
            f"cannot delete {person.name!r}: {listed} still refer to them; archive them instead"
        )
    if check:
        context.skip_audit = True
        return person
    try:
        async with context.session.begin_nested():
            await context.session.delete(person)
            await context.session.flush()
    except IntegrityError as error:
        raise RuleViolation(
            f"cannot delete {person.name!r}: other data still refers to them; archive them instead"
        ) from error
    return person


@mutation.field("duplicatePerson")
async def resolve_duplicate_person(
    _root: Any,
    info: Any,
    id: str,
    name: str,
    email: str | None = None,
    roleId: str | None = None,
) -> Person:
    """A new person like the original: role, colour, language, start date, settings, tags and
    people managers. Without `email` the copy gets `local+copyN@domain` of the original."""
    context: RequestContext = info.context
    require_admin(context, "duplicate people")
    original = await _person(context, id)
    role = await _role(context, roleId) if roleId is not None else original.role
    if email is not None:
        await _check_email_free(context, email)
    else:
        email = await _free_copy_email(context, original.email)
    person = Person(
        organisation_id=context.org_id,
        name=name,
        email=email,
        role_id=role.id,
        color=original.color,
        lang=original.lang,
        timezone=original.timezone,
        currency=original.currency,
        start_date_ms=original.start_date_ms,
        created_ms=context.now_ms,
        settings=copy.deepcopy(original.settings or {}),
    )
    person.role = role
    context.session.add(person)
    await context.session.flush()
    managers = await context.session.scalars(
        select(PersonManager.manager_id).where(
            PersonManager.organisation_id == context.org_id,
            PersonManager.person_id == original.id,
        )
    )
    for manager_id in list(managers):
        context.session.add(
            PersonManager(
                organisation_id=context.org_id,
                manager_id=manager_id,
                person_id=person.id,
                created_ms=context.now_ms,
            )
        )
    tags = await context.session.scalars(
        select(PersonTag).where(
            PersonTag.organisation_id == context.org_id, PersonTag.person_id == original.id
        )
    )
    for tag in list(tags):
        context.session.add(
            PersonTag(
                organisation_id=context.org_id,
                tag_id=tag.tag_id,
                person_id=person.id,
                start_ms=tag.start_ms,
            )
        )
    await context.session.flush()
    return person


async def _set_archived(
    context: RequestContext, ids: list[str], argument: str, value: bool
) -> list[Person]:
    if argument == "ids":
        check_unique_ids(ids, "ids")
    persons = await get_many_in_org(
        context.session, Person, context.org_id, ids, argument, "person"
    )
    if value:
        leaving = {p.id for p in persons if _is_active_admin(p)}
        if leaving:
            await _ensure_an_admin_remains(context, leaving, "archive them")
    for person in persons:
        person.archived = value
    return persons


@mutation.field("archivePerson")
async def resolve_archive_person(_root: Any, info: Any, id: str) -> Person:
    context: RequestContext = info.context
    require_admin(context, "archive people")
    if id == context.person.id:
        raise BadInput("id", "you cannot archive yourself")
    return (await _set_archived(context, [id], "id", True))[0]


@mutation.field("archivePersons")
async def resolve_archive_persons(_root: Any, info: Any, ids: list[str]) -> list[Person]:
    context: RequestContext = info.context
    require_admin(context, "archive people")
    for index, value in enumerate(ids):
        if value == context.person.id:
            raise BadInput(f"ids[{index}]", "you cannot archive yourself")
    return await _set_archived(context, ids, "ids", True)


@mutation.field("unarchivePerson")
async def resolve_unarchive_person(_root: Any, info: Any, id: str) -> Person:
    context: RequestContext = info.context
    require_admin(context, "unarchive people")
    return (await _set_archived(context, [id], "id", False))[0]


@mutation.field("unarchivePersons")
async def resolve_unarchive_persons(_root: Any, info: Any, ids: list[str]) -> list[Person]:
    context: RequestContext = info.context
    require_admin(context, "unarchive people")
    return await _set_archived(context, ids, "ids", False)


@mutation.field("editPersonName")
async def resolve_edit_person_name(_root: Any, info: Any, id: str, name: str) -> Person:
    context: RequestContext = info.context
    require_admin(context)
    person = await _person(context, id)
    person.name = name
    return person


@mutation.field("editPersonEmail")
async def resolve_edit_person_email(_root: Any, info: Any, id: str, email: str) -> Person:
    context: RequestContext = info.context
    require_admin(context)
    person = await _person(context, id)
    await _check_email_free(context, email, except_id=person.id)
    person.email = email
    return person


@mutation.field("editPersonRole")
async def resolve_edit_person_role(_root: Any, info: Any, id: str, roleId: str) -> Person:
    context: RequestContext = info.context
    require_admin(context)
    person = await _person(context, id)
    role = await _role(context, roleId)
    if _is_active_admin(person) and role.kind != ROLE_ADMIN:
        await _ensure_an_admin_remains(context, {person.id}, "change the role")
    person.role_id = role.id
    person.role = role
    return person


@mutation.field("editPersonStartDate")
async def resolve_edit_person_start_date(_root: Any, info: Any, id: str, startDate: int) -> Person:
    context: RequestContext = info.context
    require_admin(context)
    person = await _person(context, id)
    if startDate < 0:
        raise BadInput("startDate", "must not be before 1970-01-01")
    person.start_date_ms = startDate
    return person


@mutation.field("editPersonColor")
async def resolve_edit_person_color(
    _root: Any, info: Any, id: str, color: str | None = None
) -> Person:
    context: RequestContext = info.context
    require_admin(context)
    person = await _person(context, id)
    person.color = color
    return person


@mutation.field("editPersonLang")
async def resolve_edit_person_lang(_root: Any, info: Any, id: str, lang: str) -> Person:
    """An administrator, or the person themselves (their interface language)."""
    context: RequestContext = info.context
    if id != context.person.id:
        require_admin(context, "change another person's language")
    person = await _person(context, id)
    value = lang.strip()
    if not _LANG_RE.match(value):
        raise BadInput("lang", f"must be a language code such as 'en' or 'fr-CA', got {lang!r}")
    language, _, region = value.replace("_", "-").partition("-")
    person.lang = f"{language}-{region.upper()}" if region else language
    return person


def _manager_relation(relation: PersonManager) -> dict[str, Any]:
    return raw_relation(
        relation.id, relation.manager_id, "managerOf", relation.person_id, "managedBy"
    )


@mutation.field("makeManagerOfPerson")
async def resolve_make_manager_of_person(
    _root: Any, info: Any, managerId: str, personId: str
) -> dict[str, Any]:
    context: RequestContext = info.context
    require_admin(context, "choose people managers")
    manager = await _person(context, managerId, "managerId")
    person = await _person(context, personId, "personId")
    if manager.id == person.id:
        raise BadInput("personId", "a person cannot be their own manager")
    existing = (
        await context.session.scalars(
            select(PersonManager).where(
                PersonManager.organisation_id == context.org_id,
                PersonManager.manager_id == manager.id,
                PersonManager.person_id == person.id,
            )
        )
    ).first()
    if existing is not None:
        return _manager_relation(existing)
    relation = PersonManager(
        organisation_id=context.org_id,
        manager_id=manager.id,
        person_id=person.id,
        created_ms=context.now_ms,
    )
    context.session.add(relation)
    await context.session.flush()
    return _manager_relation(relation)


@mutation.field("removeManagerOfPerson")
async def resolve_remove_manager_of_person(
    _root: Any, info: Any, managerId: str, personId: str
) -> dict[str, Any]:
    context: RequestContext = info.context
    require_admin(context, "choose people managers")
    manager = await _person(context, managerId, "managerId")
    person = await _person(context, personId, "personId")
    relation = (
        await context.session.scalars(
            select(PersonManager).where(
                and_(
                    PersonManager.organisation_id == context.org_id,
                    PersonManager.manager_id == manager.id,
                    PersonManager.person_id == person.id,
                )
            )
        )
    ).first()
    if relation is None:
        raise BadInput("managerId", f"{manager.name!r} is not a manager of {person.name!r}")
    result = _manager_relation(relation)
    await context.session.delete(relation)
    return result


# Who manages whom, read from a person --------------------------------------------------------


@person_type.field("relations")
def resolve_relations(person: Person, _info: Any) -> Person:
    return person


async def _manager_relations(
    context: RequestContext, person_id: str, side: str
) -> list[dict[str, Any]]:
    """{relationId, value, startTime} for each manager (side "person") or managed person
    (side "manager") of `person_id`, ordered by name."""
    if side == "person":
        own, other = PersonManager.person_id, PersonManager.manager_id
    else:
        own, other = PersonManager.manager_id, PersonManager.person_id
    rows = await context.session.execute(
        select(PersonManager.id, Person)
        .join(Person, Person.id == other)
        .where(PersonManager.organisation_id == context.org_id, own == person_id)
        .order_by(func.lower(Person.name), Person.id)
    )
    return [
        {"relationId": relation_id, "value": person, "startTime": None}
        for relation_id, person in rows.unique()
    ]


@relations_type.field("managedBy")
async def resolve_managed_by(person: Person, info: Any) -> list[dict[str, Any]]:
    return await _manager_relations(info.context, person.id, "person")


@relations_type.field("managerOf")
def resolve_manager_of(person: Person, _info: Any) -> Person:
    return person


@manager_of_type.field("persons")
async def resolve_manager_of_persons(person: Person, info: Any) -> list[dict[str, Any]]:
    return await _manager_relations(info.context, person.id, "manager")


BINDABLES = [query, mutation, person_type, relations_type, manager_of_type]
