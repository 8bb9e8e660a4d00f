"""Sign in with Google or with Microsoft (the deployment's OpenID Connect clients, handed to
the pages in `PagesConfig.identity_providers`):
GET /sso/<provider>/initiate[?account=<organisation id>] sends the browser to the provider,
GET /sso/<provider>/callback opens the session of the person the verified address names
(`service/signin/public_idp.py`). The protocol is `service/pages/oidc_flow.py`, as for an
organisation's own provider.
"""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from service.models import Person
from service.pages.common import PageContext
from service.pages.config import IdentityProvider
from service.pages.oidc_flow import (
    SSO_COOKIE,
    SsoRefused,
    consume,
    discover,
    identity,
    returned_flow,
    start,
)
from service.pages.sso import finish_signin, refused
from service.signin.public_idp import person_for_provider

UNVERIFIED = "{label} did not confirm that the address {address} is yours (email_verified)."


def _verified(provider: IdentityProvider, claims: dict[str, Any]) -> bool:
    """The provider vouches for the address: `email_verified`, or for Microsoft (whose ID
    tokens do not carry it) the optional claim `xms_edov`, "e-mail domain owner verified"."""
    flags = [claims.get("email_verified")]
    if provider.name == "microsoft":
        flags.append(claims.get("xms_edov"))
    return any(flag is True or str(flag).lower() == "true" for flag in flags)


def public_sso_routes(pages: PageContext) -> list[BaseRoute]:
    settings = pages.config
    config = pages.service.executor.signin
    providers = {provider.name: provider for provider in settings.identity_providers}

    def callback_uri(provider: IdentityProvider) -> str:
        return f"{settings.public_url}/sso/{provider.name}/callback"

    def configured(provider: IdentityProvider) -> dict[str, Any]:
        return {"issuer": provider.issuer, "clientId": provider.client_id,
                "clientSecret": provider.client_secret}

    async def initiate(request: Request) -> Response:
        provider = providers.get(request.path_params["provider"])
        if provider is None:
            return refused("This sign-in method is not offered here.", 404)
        account = request.query_params.get("account", "").strip()
        if account and not (len(account) == 24 and all(c in "0123456789abcdef" for c in account)):
            return refused('Invalid argument "account": not an account id.', 400)
        try:
            async with httpx.AsyncClient(timeout=10) as http:
                oidc = await discover(http, configured(provider))
        except SsoRefused as error:
            return refused(error.message, 502)
        return start(oidc, callback_uri(provider), settings.secret_key, config,
                     idp=provider.name, account=account or None)

    async def callback(request: Request) -> Response:
        provider = providers.get(request.path_params["provider"])
        if provider is None:
            return refused("This sign-in method is not offered here.", 404)
        try:
            flow = returned_flow(settings.secret_key, request.cookies.get(SSO_COOKIE),
                                 request.query_params, idp=provider.name)
            await consume(pages.service.sessions, flow)
            # The deployment's own providers (the operator's addresses): no outbound policy.
            async with httpx.AsyncClient(timeout=10) as http:
                oidc = await discover(http, configured(provider))
                claims = await identity(http, oidc, request.query_params.get("code", ""),
                                        flow, callback_uri(provider))
            if not _verified(provider, claims):
                raise SsoRefused(UNVERIFIED.format(label=provider.label,
                                                   address=claims.get("email")))
        except SsoRefused as error:
            return refused(error.message, 403)

        async def find(session: AsyncSession, now: int) -> Person:
            return await person_for_provider(
                session, provider.label, str(claims["email"]), str(claims.get("name") or ""),
                flow.get("account"), now,
            )

        return await finish_signin(pages, request, find, provider.name)

    return [
        Route("/sso/{provider}/initiate", initiate, methods=["GET"]),
        Route("/sso/{provider}/callback", callback, methods=["GET"]),
    ]
