"""The organisation of the key and the person of the key."""

from __future__ import annotations

from typing import Any

from ariadne import MutationType, ObjectType, QueryType

from service.errors import PermissionDenied
from service.graphql.context import RequestContext
from service.models import Organisation, Person

query = QueryType()
mutation = MutationType()
organisation_type = ObjectType("SvcOrganisation")
person_type = ObjectType("SvcPerson")


def require_admin(context: RequestContext) -> None:
    if not context.is_admin:
        raise PermissionDenied("only an administrator may do this")


@query.field("currentOrganisation")
async def resolve_current_organisation(_root: Any, info: Any) -> Organisation:
    context: RequestContext = info.context
    return context.organisation


@query.field("currentPerson")
async def resolve_current_person(_root: Any, info: Any) -> Person:
    context: RequestContext = info.context
    return context.person


@mutation.field("editOrganisationName")
async def resolve_edit_organisation_name(_root: Any, info: Any, name: str) -> Organisation:
    context: RequestContext = info.context
    require_admin(context)
    context.organisation.name = name
    return context.organisation


@person_type.field("startDate")
def resolve_start_date(person: Person, _info: Any) -> int:
    return person.start_date_ms


BINDABLES = [query, mutation, organisation_type, person_type]
