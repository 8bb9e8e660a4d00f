"""The services on persons: person.list, person.get."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from service.legacy.lookups import find_in_org
from service.legacy.request import Handler, LegacyRequest, active_filter, identifier
from service.models import Person


async def person_dict(request: LegacyRequest, person: Person) -> dict[str, Any]:
    return {
        **(await request.xids("persons").ref(person.id) or {}),
        "name": person.name,
        "email": person.email,
        "active": not person.archived,
        "role": person.role.name,
    }


async def person_list(request: LegacyRequest) -> dict[str, Any]:
    active = active_filter(request, "person")
    rows = await request.session.scalars(
        select(Person)
        .where(Person.organisation_id == request.org_id)
        .order_by(func.lower(Person.name), Person.id)
    )
    return {
        "persons": [
            await person_dict(request, person)
            for person in rows.unique()
            if active is None or active != person.archived
        ]
    }


async def person_get(request: LegacyRequest) -> dict[str, Any]:
    value = identifier(request, "person")
    person = await find_in_org(request, Person, "persons", value, "person", "Person")
    return {"person": await person_dict(request, person)}


SERVICES: dict[str, Handler] = {"person.get": person_get, "person.list": person_list}
