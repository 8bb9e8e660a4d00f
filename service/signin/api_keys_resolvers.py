"""Keys and sessions: `createApiKey`, `getApiKeys`, `revokeApiKey` (a person's extra keys for
integrations) and `currentSession` (validateLegacyApiKey is legacy's: legacy_resolvers).

The person's own key (the user menu's "Your API key", reset on the account page) stays the
one key the specification speaks of; it is not listed here and not revoked here. An
integration key is shown once, by `createApiKey`: the service keeps its SHA-256 digest and a
hint (its first characters), which is what `getApiKeys` shows and what `revokeApiKey` also
accepts. Authentication reads the key's row on every request, so a revoked key is refused by
the next request, in every process (`service/graphql/auth.py`).
"""

from __future__ import annotations

import secrets
from typing import Any

from ariadne import MutationType, QueryType
from sqlalchemy import func, select

from service.errors import BadInput, PermissionDenied, RuleViolation
from service.graphql.auth import key_digest
from service.graphql.context import RequestContext
from service.models import ACCOUNT_KIND, INTEGRATION_KIND, KEY_INTEGRATION, ApiKey
from service.signin.web import csrf_token

query = QueryType()
mutation = MutationType()

KEY_PREFIX = "tbk_"
HINT_CHARS = 12  # the prefix and 8 hex digits
MAX_ACTIVE_KEYS = 50  # per person, not revoked and not expired
MAX_OFFERED_CHARS = 200


def _shown(row: ApiKey) -> dict[str, Any]:
    return {"key": f"{row.hint}…", "expire": row.expire_ms, "revoked": row.revoked_ms is not None}


def _may_manage_keys(context: RequestContext, what: str) -> None:
    """Keys are made and revoked by the person with their own credentials: not with an
    integration key (a leaked one must not make more), not by an administrator acting as
    them."""
    if context.integration_key:
        raise PermissionDenied(f"an integration key may not {what}: use your own key")
    if context.signed_in is not None and context.signed_in.took_over_by is not None:
        raise PermissionDenied(f"an administrator acting as someone may not {what}")


@query.field("getApiKeys")
async def resolve_get_api_keys(_root: Any, info: Any) -> list[dict[str, Any]]:
    """The caller's integration keys (revoked ones too), oldest first, as their hints."""
    context: RequestContext = info.context
    rows = await context.session.scalars(
        select(ApiKey)
        .where(ApiKey.organisation_id == context.org_id, ApiKey.person_id == context.person.id,
               ApiKey.kind == INTEGRATION_KIND)
        .order_by(ApiKey.created_ms, ApiKey.hint)
    )
    return [_shown(row) for row in rows]


@mutation.field("createApiKey")
async def resolve_create_api_key(
    _root: Any, info: Any, expire: int | None = None
) -> dict[str, Any]:
    """A new key for an integration, acting as the caller; shown this once."""
    context: RequestContext = info.context
    _may_manage_keys(context, "make keys")
    if expire is not None and expire <= context.now_ms:
        raise BadInput("expire", "must lie in the future")
    active = await context.session.scalar(
        select(func.count()).select_from(ApiKey).where(
            ApiKey.organisation_id == context.org_id, ApiKey.person_id == context.person.id,
            ApiKey.kind == INTEGRATION_KIND, ApiKey.revoked_ms.is_(None),
            (ApiKey.expire_ms.is_(None)) | (ApiKey.expire_ms > context.now_ms),
        )
    )
    if (active or 0) >= MAX_ACTIVE_KEYS:
        raise RuleViolation(f"a person may hold at most {MAX_ACTIVE_KEYS} keys that are neither "
                            "revoked nor expired: revoke one first")
    key = KEY_PREFIX + secrets.token_hex(20)
    context.session.add(ApiKey(
        key=key_digest(key), kind=KEY_INTEGRATION, hint=key[:HINT_CHARS],
        person_id=context.person.id, organisation_id=context.org_id,
        created_ms=context.now_ms, expire_ms=expire,
    ))
    return {"key": key, "expire": expire, "revoked": False}


async def _own_key(context: RequestContext, offered: str) -> ApiKey:
    """The caller's integration key named by the key itself or by its hint (as listed)."""
    own = (ApiKey.organisation_id == context.org_id) & (ApiKey.person_id == context.person.id)
    account = await context.session.scalar(
        select(ApiKey.key).where(own, ApiKey.kind == ACCOUNT_KIND, ApiKey.key == offered)
    )
    if account is not None:
        raise BadInput("key", "is the key of your account: reset it on the account page")
    hint = offered[:-1] if offered.endswith("…") else offered
    rows = list(await context.session.scalars(
        select(ApiKey).where(
            own, ApiKey.kind == INTEGRATION_KIND,
            (ApiKey.key == key_digest(offered)) | (ApiKey.hint == hint),
        ).with_for_update()
    ))
    if not rows:
        raise BadInput("key", "is not one of your keys")
    if len(rows) > 1:
        raise BadInput("key", "names several of your keys: give the whole key")
    return rows[0]


@mutation.field("revokeApiKey")
async def resolve_revoke_api_key(_root: Any, info: Any, key: str | None = None) -> dict[str, Any]:
    """Revokes one of the caller's integration keys: refused from the next request on."""
    context: RequestContext = info.context
    _may_manage_keys(context, "revoke keys")
    offered = (key or "").strip()
    if not offered:
        raise BadInput("key", "must name one of your keys")
    if len(offered) > MAX_OFFERED_CHARS:
        raise BadInput("key", "is not one of your keys")
    row = await _own_key(context, offered)
    # The audit row names the key by its hint, never by the key itself.
    context.audit_arguments = {"key": f"{row.hint}…"}
    if row.revoked_ms is None:  # revoking it again changes nothing
        row.revoked_ms = context.now_ms
    return _shown(row)


@query.field("currentSession")
async def resolve_current_session(_root: Any, info: Any) -> dict[str, Any] | None:
    """The browser session the request came with (None for a request made with a key)."""
    context: RequestContext = info.context
    signed_in = context.signed_in
    if signed_in is None or context.web is None or context.web.session_token is None:
        return None
    return {"id": signed_in.row.id, "csrftoken": csrf_token(context.web.session_token),
            "authenticated": True, "date": signed_in.row.created_ms}


BINDABLES = [query, mutation]
