"""People managers: who manages whom, read from a person (their managers, the people they
manage), and making or removing a people manager (administrators)."""

from __future__ import annotations

from typing import Any

from ariadne import MutationType, ObjectType
from sqlalchemy import and_, func, select

from service.errors import BadInput
from service.graphql.context import RequestContext
from service.models import Person, PersonManager
from service.people.checks import person_by_id, require_admin
from service.structure import raw_relation

mutation = MutationType()
person_type = ObjectType("SvcPerson")
relations_type = ObjectType("SvcPersonRelations")
manager_of_type = ObjectType("SvcPersonManagerOf")


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
    manager = await person_by_id(context, managerId, "managerId")
    person = await person_by_id(context, personId, "personId")
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
    manager = await person_by_id(context, managerId, "managerId")
    person = await person_by_id(context, personId, "personId")
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


BINDABLES = [mutation, person_type, relations_type, manager_of_type]
