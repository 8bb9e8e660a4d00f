"""People joining and leaving (administrators): adding a person, duplicating one, archiving and
unarchiving, and deleting one that no time or expense record refers to. An organisation always
keeps one active administrator, and nobody archives or deletes themselves."""

from __future__ import annotations

import copy
from typing import Any

from ariadne import MutationType
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from service import rate_limit
from service.access import guard_administrators
from service.errors import BadInput, RuleViolation
from service.graphql.context import RequestContext
from service.lookup import get_many_in_org
from service.models import ExpenseRecord, Person, PersonManager, PersonTag, TimeRecord
from service.organisation import new_person
from service.people.checks import (
    active_role_by_id,
    check_email_free,
    ensure_an_admin_remains,
    is_active_admin,
    person_by_id,
    require_admin,
)
from service.structure import check_unique_ids

mutation = MutationType()


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


@mutation.field("addPerson")
async def resolve_add_person(
    _root: Any, info: Any, name: str, email: str, roleId: str, color: str | None = None
) -> Person:
    context: RequestContext = info.context
    require_admin(context, "add people")
    role = await active_role_by_id(context, roleId)
    await check_email_free(context, email)
    await rate_limit.count_durable(context.session, rate_limit.ADDING_PEOPLE, context.org_id,
                                   context.person.id, context.now_ms)
    person = new_person(context.org_id, name, email, role, context.now_ms, color)
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
    person = await person_by_id(context, id)
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
    original = await person_by_id(context, id)
    role = await active_role_by_id(context, roleId) if roleId is not None else original.role
    if email is not None:
        await check_email_free(context, email)
    else:
        email = await _free_copy_email(context, original.email)
    # A copy is a person added: the same budget as addPerson (no side door).
    await rate_limit.count_durable(context.session, rate_limit.ADDING_PEOPLE, context.org_id,
                                   context.person.id, context.now_ms)
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
    guard_administrators(context, persons)
    if value:
        leaving = {p.id for p in persons if is_active_admin(p)}
        if leaving:
            await ensure_an_admin_remains(context, leaving, "archive them")
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


BINDABLES = [mutation]
