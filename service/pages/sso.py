"""Single sign-on with the organisation's custom OpenID Connect provider: GET
/sso/<org>/custom/initiate sends the browser to the provider, GET /sso/<org>/custom/callback
opens the session. The protocol itself (PKCE, nonce, signed state, ID-token checks) is
`service/pages/oidc_flow.py`, shared with the public providers (`service/pages/public_sso.py`);
`finish_signin` here opens the session for the person a provider names, for both.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from plumbing.db import unit_of_work
from plumbing.ids import is_id
from service.errors import ServiceError
from service.models import AuditTrail, Organisation, Person
from service.pages.common import PageContext, page
from service.pages.oidc_flow import (
    SSO_COOKIE,
    SsoRefused,
    consume,
    discover,
    identity,
    returned_flow,
    start,
)
from service.signin.sessions import SESSION_MS, open_session
from service.signin.sso import callback_path, custom_provider, person_for_login
from service.signin.web import SESSION_COOKIE

FindPerson = Callable[[AsyncSession, int], Awaitable[Person]]


def refused(message: str, status: int = 400) -> Response:
    return page("signin.html", status, step="email", email="", error=message)


def client_ip(request: Request) -> str:
    return request.client.host if request.client else ""


async def finish_signin(pages: PageContext, request: Request, find: FindPerson, method: str
                        ) -> Response:
    """In one transaction: the person (`find`), their session and the audit entry; then the
    session cookie and /account. A refusal (a ServiceError, SsoRefused too) is a 403 page."""
    config = pages.service.executor.signin
    try:
        now = pages.service.clock.now_ms()
        async with unit_of_work(pages.service.sessions) as session:
            person = await find(session, now)
            opened = await open_session(
                session, person, now, request.headers.get("user-agent", ""),
                client_ip(request), method,
            )
            session.add(AuditTrail(
                organisation_id=person.organisation_id, operation_name="signin",
                person_id=person.id, timestamp_ms=now, arguments={"method": method},
                response_id=person.id, response_ids=[person.id],
            ))
    except ServiceError as error:
        return refused(error.message, 403)
    response = RedirectResponse("/account", status_code=303)
    response.headers.append(
        "set-cookie", config.set_cookie(SESSION_COOKIE, opened.token, SESSION_MS // 1000)
    )
    response.headers.append("set-cookie", config.set_cookie(SSO_COOKIE, "", 0))
    return response


def sso_routes(pages: PageContext) -> list[BaseRoute]:
    settings = pages.config
    config = pages.service.executor.signin

    async def organisation_of(org_id: str) -> tuple[Organisation, dict[str, Any]]:
        if not is_id(org_id):  # (a NUL in it, say, is an error of PostgreSQL's, not a miss)
            raise SsoRefused("No single sign-on is configured at this address.")
        async with pages.service.read_sessions() as session:
            organisation = await session.get(Organisation, org_id)
        custom = custom_provider(organisation) if organisation is not None else None
        if organisation is None or custom is None:
            raise SsoRefused("No single sign-on is configured at this address.")
        return organisation, custom

    async def initiate(request: Request) -> Response:
        org_id = request.path_params["org_id"]
        try:
            _organisation, custom = await organisation_of(org_id)
            async with pages.service.outbound.client() as http:  # the admin's address
                provider = await discover(http, custom)
        except SsoRefused as error:
            return refused(error.message, 404)
        return start(provider, f"{settings.public_url}{callback_path(org_id)}",
                     settings.secret_key, config, org=org_id)

    async def callback(request: Request) -> Response:
        org_id = request.path_params["org_id"]
        try:
            flow = returned_flow(settings.secret_key, request.cookies.get(SSO_COOKIE),
                                 request.query_params, org=org_id)
            await consume(pages.service.sessions, flow)
            organisation, custom = await organisation_of(org_id)
            async with pages.service.outbound.client() as http:
                provider = await discover(http, custom)
                claims = await identity(http, provider, request.query_params.get("code", ""),
                                        flow, f"{settings.public_url}{callback_path(org_id)}")
        except SsoRefused as error:
            return refused(error.message, 403)

        async def find(session: AsyncSession, now: int) -> Person:
            current = await session.get(Organisation, org_id) or organisation
            return await person_for_login(
                session, current, str(claims["email"]), str(claims.get("name") or ""), now,
            )

        return await finish_signin(pages, request, find, "sso")

    return [
        Route("/sso/{org_id}/custom/initiate", initiate, methods=["GET"]),
        Route("/sso/{org_id}/custom/callback", callback, methods=["GET"]),
    ]
