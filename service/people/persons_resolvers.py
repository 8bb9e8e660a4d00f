"""People, read: a person, the people matching filters (their number, their ids).
Everyone in the organisation may read them (the roles: roles.py).

Adding, duplicating, archiving and deleting people are in person_lifecycle.py, editing a
person's details in person_details.py, people managers in person_managers.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ariadne import QueryType
from sqlalchemy import Select, func, select
from sqlalchemy.sql.elements import ColumnElement

from service.access import remember_tags_of
from service.graphql.context import RequestContext
from service.graphql.filters import filter_clause
from service.graphql.lookahead import requested
from service.lookup import get_in_org
from service.models import Person, PersonTag, Tag
from service.organisation import ATTRIBUTES
from service.plannings import remember_timelines_of
from service.structure import active_clause, name_contains, subtree

query = QueryType()
# A person's attributes whose values cascade through their tags (settings_cascade.for_person).
_CASCADING = frozenset(ATTRIBUTES.values())
# Those planned from the schedule timeline of the person, their tags and the organisation.
_PLANNED = frozenset({"scheduledDays", "expectedTime"})


def _person_conditions(org_id: str) -> dict[str, Any]:
    def tagged(tag_ids: Sequence[str | None]) -> ColumnElement[bool]:
        return Person.id.in_(
            select(PersonTag.person_id).where(
                PersonTag.organisation_id == org_id,
                PersonTag.tag_id.in_(subtree(Tag, org_id, tag_ids)),
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
    persons = list((await context.session.scalars(statement)).unique())
    if len(persons) > 1:  # what each person's fields would read, read for the page at once
        fields, ids = requested(info).keys(), [p.id for p in persons]
        if not (_CASCADING | _PLANNED).isdisjoint(fields):  # through their tags
            await remember_tags_of(context.session, context.org_id, ids)
        if not _PLANNED.isdisjoint(fields):
            await remember_timelines_of(context.session, context.org_id, ids)
    return persons


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


BINDABLES = [query]
