"""The organisation of the key (name, colour, single sign-on settings) and the person of the key.

Single sign-on settings live in `Organisation.sso`::

    {"google": {"ssoOnly": bool, "domains": [str], "autoUser": bool},
     "microsoft": {"ssoOnly": bool},
     "custom": {"issuer", "clientId", "clientSecret", "authorizationUrl", "tokenUrl", "ssoOnly"}}

Only administrators read them back. The custom provider's client secret is write-only: it
is read back as a fixed mask, it is replaced by the mask in the arguments the audit trail
records, and sending the mask back keeps the stored secret (a client may round-trip what it
read).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from ariadne import MutationType, ObjectType, QueryType

from service.access import SETTINGS, requirer
from service.errors import BadInput
from service.graphql.context import RequestContext
from service.models import Organisation, Person
from service.organisation.models import SECRET_MASK
from service.organisation.settings_cascade import set_json
from service.value_words import described

require_permission = requirer(SETTINGS)

query = QueryType()
mutation = MutationType()
organisation_type = ObjectType("SvcOrganisation")
person_type = ObjectType("SvcPerson")

_DOMAIN_RE = re.compile(r"^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")
_LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1"}


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
    require_permission(context, "do this")
    context.organisation.name = name
    return context.organisation


@mutation.field("editOrganisationColor")
async def resolve_edit_organisation_color(
    _root: Any, info: Any, color: str | None = None
) -> Organisation:
    context: RequestContext = info.context
    require_permission(context, "do this")
    context.organisation.color = color
    return context.organisation


def _store_sso(organisation: Organisation, key: str, value: dict[str, Any] | None) -> None:
    set_json(organisation, key, value, column="sso")


def _flag(value: Any, argument: str) -> bool:
    if not isinstance(value, bool):
        raise BadInput(argument, "must be true or false")
    return value


@mutation.field("editGoogleSSO")
async def resolve_edit_google_sso(_root: Any, info: Any, google: dict[str, Any]) -> Organisation:
    """Only the fields given change (the settings screen autosaves one field at a time)."""
    context: RequestContext = info.context
    require_permission(context, "do this")
    current = _google(context.organisation)
    if google.get("ssoOnly") is not None:
        current["ssoOnly"] = _flag(google["ssoOnly"], "google.ssoOnly")
    if google.get("autoUser") is not None:
        current["autoUser"] = _flag(google["autoUser"], "google.autoUser")
    if google.get("domains") is not None:
        domains: list[str] = []
        for index, raw in enumerate(google["domains"]):
            domain = str(raw).strip().lower().removeprefix("@")
            if not _DOMAIN_RE.match(domain):
                raise BadInput(f"google.domains[{index}]", f"{raw!r} is not a domain name")
            if domain not in domains:
                domains.append(domain)
        current["domains"] = domains
    _store_sso(context.organisation, "google", current)
    return context.organisation


@mutation.field("editMicrosoftSSO")
async def resolve_edit_microsoft_sso(
    _root: Any, info: Any, microsoft: dict[str, Any]
) -> Organisation:
    context: RequestContext = info.context
    require_permission(context, "do this")
    _store_sso(
        context.organisation,
        "microsoft",
        {"ssoOnly": _flag(microsoft.get("ssoOnly"), "microsoft.ssoOnly")},
    )
    return context.organisation


def _url(value: Any, argument: str) -> str:
    text = str(value or "").strip()
    parts = urlsplit(text)
    secure = parts.scheme == "https" or (
        parts.scheme == "http" and (parts.hostname or "") in _LOCAL_HOSTS
    )
    if not parts.netloc or not secure:
        raise BadInput(argument, f"must be an https URL, got {described(value)}")
    return text


@mutation.field("editCustomSSO")
async def resolve_edit_custom_sso(
    _root: Any, info: Any, customSSO: dict[str, Any] | None = None
) -> Organisation:
    """Custom OpenID Connect provider; null clears it. `clientSecret` is write-only."""
    context: RequestContext = info.context
    require_permission(context, "do this")
    if customSSO is None:
        _store_sso(context.organisation, "custom", None)
        return context.organisation
    secret = str(customSSO.get("clientSecret") or "")
    # The audit trail records the arguments after the resolver ran: never the secret.
    if "clientSecret" in customSSO:
        customSSO["clientSecret"] = SECRET_MASK
    previous = (context.organisation.sso or {}).get("custom")
    if secret == SECRET_MASK:
        if not previous:
            raise BadInput("customSSO.clientSecret", "no secret is stored yet: send the secret")
        secret = str(previous["clientSecret"])
    if not secret.strip():
        raise BadInput("customSSO.clientSecret", "must not be empty")
    client_id = str(customSSO.get("clientId") or "").strip()
    if not client_id:
        raise BadInput("customSSO.clientId", "must not be empty")
    issuer = _url(customSSO.get("issuer"), "customSSO.issuer")
    authorization_url = customSSO.get("authorizationUrl")
    token_url = customSSO.get("tokenUrl")
    if authorization_url is not None or token_url is not None:
        # "Other provider": both endpoints replace the issuer's discovery document.
        if authorization_url is None:
            raise BadInput("customSSO.authorizationUrl", "is required together with tokenUrl")
        if token_url is None:
            raise BadInput("customSSO.tokenUrl", "is required together with authorizationUrl")
        authorization_url = _url(authorization_url, "customSSO.authorizationUrl")
        token_url = _url(token_url, "customSSO.tokenUrl")
    sso_only = customSSO.get("ssoOnly")
    _store_sso(
        context.organisation,
        "custom",
        {
            "issuer": issuer,
            "clientId": client_id,
            "clientSecret": secret,
            "authorizationUrl": authorization_url,
            "tokenUrl": token_url,
            "ssoOnly": bool(sso_only) if sso_only is not None else False,
        },
    )
    return context.organisation


def _google(organisation: Organisation) -> dict[str, Any]:
    stored = (organisation.sso or {}).get("google") or {}
    return {
        "ssoOnly": bool(stored.get("ssoOnly", False)),
        "domains": list(stored.get("domains") or []),
        "autoUser": bool(stored.get("autoUser", False)),
    }


@organisation_type.field("sso")
def resolve_sso(organisation: Organisation, info: Any) -> dict[str, Any]:
    require_permission(info.context, "do this")
    microsoft = (organisation.sso or {}).get("microsoft") or {}
    return {
        "google": _google(organisation),
        "microsoft": {"ssoOnly": bool(microsoft.get("ssoOnly", False))},
    }


@organisation_type.field("customSSO")
def resolve_custom_sso(organisation: Organisation, info: Any) -> dict[str, Any] | None:
    require_permission(info.context, "do this")
    stored = (organisation.sso or {}).get("custom")
    if not stored:
        return None
    return {
        "issuer": stored["issuer"],
        "clientId": stored["clientId"],
        "clientSecret": SECRET_MASK,
        "authorizationUrl": stored.get("authorizationUrl"),
        "tokenUrl": stored.get("tokenUrl"),
        "ssoOnly": bool(stored.get("ssoOnly", False)),
        # Paths below the public address of timebot, to enter in the provider.
        "initiateURI": f"/sso/{organisation.id}/custom/initiate",
        "callbackURI": f"/sso/{organisation.id}/custom/callback",
    }


@person_type.field("startDate")
def resolve_start_date(person: Person, _info: Any) -> int:
    return person.start_date_ms


BINDABLES = [query, mutation, organisation_type, person_type]
