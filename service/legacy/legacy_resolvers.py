"""The legacy interface's GraphQL extension: the token module, Enable/Disable API calls and
validateLegacyApiKey."""

from __future__ import annotations

from typing import Any

from ariadne import MutationType, ObjectType, QueryType

from service.errors import PermissionDenied
from service.graphql.context import RequestContext
from service.legacy.errors import LegacyError
from service.legacy.tokens import (
    authenticate_token,
    current_legacy_token,
    ensure_legacy_token,
    reset_legacy_token,
)
from service.models import Organisation

query = QueryType()
mutation = MutationType()

# The longest token validateLegacyApiKey reads (a legacy token is far shorter).
MAX_OFFERED_CHARS = 200
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


@mutation.field("validateLegacyApiKey")
async def resolve_validate_legacy_api_key(_root: Any, info: Any, apiKey: str) -> bool:
    """Whether a token of the legacy interface is valid for a person of the caller's
    organisation (what an integration moving from the legacy interface checks)."""
    context: RequestContext = info.context
    context.audit_arguments = {"apiKey": "…"}  # the audit row never keeps the token
    token = apiKey.strip()
    if not token or len(token) > MAX_OFFERED_CHARS:
        return False
    try:
        organisation, _person = await authenticate_token(context.session, token)
    except LegacyError:
        return False
    return organisation.id == context.org_id


BINDABLES = [query, mutation, organisation_type]
