"""A person and their role as Core columns of one row, made entities by service.as_loaded: what
the ORM loads of a Person (its role joined). Shared by the hot reads that take a person along:
a request's key (service.graphql.auth) and an event's owner
(service.timesheets.approval_events_resolvers).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import Table
from sqlalchemy.ext.asyncio import AsyncSession

from service.as_loaded import Columns
from service.models import Person, Role

PERSONS = cast(Table, Person.__table__)
ROLES = cast(Table, Role.__table__)
_PERSON = Columns(Person, prefix="p_", relations=("role",))
_ROLE = Columns(Role, prefix="r_")

LABELLED = [*_PERSON.labelled, *_ROLE.labelled]  # select these, in this order
ROLE_OF_PERSON = ROLES.c.id == PERSONS.c.role_id  # the outer join that brings the role along


def person_of(session: AsyncSession, row: Sequence[Any], offset: int) -> Person | None:
    """The person of LABELLED's columns from `offset` on (None: the outer join found none),
    with their role loaded."""
    role = _ROLE.build(session, row, offset + _PERSON.width)
    return _PERSON.build(session, row, offset, {"role": role})
