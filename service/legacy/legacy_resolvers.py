"""The legacy interface's GraphQL extension: the token module and Enable/Disable API calls."""

from __future__ import annotations

from typing import Any

from ariadne import MutationType, ObjectType, QueryType

from service.errors import PermissionDenied
from service.graphql.context import RequestContext
from service.legacy.tokens import current_legacy_token, ensure_legacy_token, reset_legacy_token
from service.models import Organisation

query = QueryType()
mutation = MutationType()
organisation_type = ObjectType("SvcOrganisation")


@query.field("legacyToken")
async def resolve_legacy_token(_root: Any, info: Any) -> str | None:
    context: RequestContext = info.context
    return await current_legacy_token(context.session, context.person)


@mutation.field("issueLegacyToken")
async def resolve_issue_legacy_token(_root: Any, info: Any) -> str:
    context: RequestContext = info.context
    existing = await current_legacy_token(context.session, context.person)
    if existing is not None:
        context.skip_audit = True
        return existing
    return await ensure_legacy_token(context.session, context.person, context.now_ms)


@mutation.field("resetLegacyToken")
async def resolve_reset_legacy_token(_root: Any, info: Any) -> str:
    context: RequestContext = info.context
    return await reset_legacy_token(context.session, context.person, context.now_ms)


@mutation.field("editOrganisationLegacyApiEnabled")
async def resolve_edit_legacy_api_enabled(_root: Any, info: Any, enabled: bool) -> Organisation:
    context: RequestContext = info.context
    if not context.is_admin:
        raise PermissionDenied("only an administrator may enable or disable API calls")
    context.organisation.api_enabled = enabled
    return context.organisation


@organisation_type.field("legacyApiEnabled")
def resolve_legacy_api_enabled(organisation: Organisation, _info: Any) -> bool:
    return bool(organisation.api_enabled)


BINDABLES = [query, mutation, organisation_type]
