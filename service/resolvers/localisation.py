"""Time zone and currency of the organisation and of people (effective values)."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ariadne import MutationType, ObjectType, ScalarType
from graphql import GraphQLError

from service import permissions
from service.errors import BadInput, PermissionDenied
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import Organisation, Person

mutation = MutationType()
organisation_type = ObjectType("SvcOrganisation")
person_type = ObjectType("SvcPerson")
time_zone = ScalarType("SvcTimeZone")


def parse_time_zone(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise GraphQLError(f"SvcTimeZone must be an IANA time zone name, got {value!r}")
    try:
        ZoneInfo(value.strip())
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise GraphQLError(f"SvcTimeZone: unknown time zone {value!r}") from error
    return value.strip()


def _parse_literal(ast: Any, _variables: Any = None) -> str:
    from graphql import value_from_ast_untyped

    return parse_time_zone(value_from_ast_untyped(ast))


time_zone.set_value_parser(parse_time_zone)
time_zone.set_literal_parser(_parse_literal)


def _localisation(time_zone_name: str, currency: str) -> dict[str, Any]:
    return {"timeZone": {"value": time_zone_name}, "currency": {"value": currency}}


@organisation_type.field("localisation")
def resolve_organisation_localisation(organisation: Organisation, _info: Any) -> dict[str, Any]:
    return _localisation(organisation.timezone, organisation.currency)


@person_type.field("localisation")
def resolve_person_localisation(person: Person, info: Any) -> dict[str, Any]:
    context: RequestContext = info.context
    organisation = context.organisation
    return _localisation(
        person.timezone or organisation.timezone, person.currency or organisation.currency
    )


def _require_admin(context: RequestContext) -> None:
    permissions.require(context, permissions.SETTINGS, "change the organisation's settings")


@mutation.field("editOrganisationLocalisationTimeZone")
async def resolve_edit_org_time_zone(_root: Any, info: Any, timeZone: str | None) -> Organisation:
    context: RequestContext = info.context
    _require_admin(context)
    if timeZone is None:
        raise BadInput("timeZone", "the organisation needs a time zone")
    context.organisation.timezone = timeZone
    return context.organisation


@mutation.field("editOrganisationLocalisationCurrency")
async def resolve_edit_org_currency(_root: Any, info: Any, currency: str | None) -> Organisation:
    context: RequestContext = info.context
    _require_admin(context)
    if currency is None:
        raise BadInput("currency", "the organisation needs a currency")
    context.organisation.currency = currency
    return context.organisation


async def _editable_person(context: RequestContext, person_id: str) -> Person:
    person = await get_in_org(context.session, Person, context.org_id, person_id, "id", "person")
    if not context.is_admin and person.id != context.person.id:
        raise PermissionDenied("only the person or an administrator may change this")
    return person


@mutation.field("editPersonLocalisationTimeZone")
async def resolve_edit_person_time_zone(
    _root: Any, info: Any, id: str, timeZone: str | None
) -> Person:
    person = await _editable_person(info.context, id)
    person.timezone = timeZone
    return person


@mutation.field("editPersonLocalisationCurrency")
async def resolve_edit_person_currency(
    _root: Any, info: Any, id: str, currency: str | None
) -> Person:
    person = await _editable_person(info.context, id)
    person.currency = currency
    return person


BINDABLES = [mutation, organisation_type, person_type, time_zone]
