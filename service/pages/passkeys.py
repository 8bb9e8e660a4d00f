"""Passkey ceremonies for the pages (JSON over fetch, WebAuthn needs JavaScript):
POST /account/passkey/options and /account/passkey/register (signed in: Origin and the
X-Timebot-CSRF header checked), POST /signin/passkey/options and /signin/passkey."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from plumbing.db import unit_of_work
from service.errors import ServiceError
from service.models import AuditTrail, Person
from service.pages.common import PageContext
from service.signin import passkeys
from service.signin.passkeys import RelyingParty
from service.signin.sessions import SESSION_MS, SignedIn, open_session
from service.signin.web import CSRF_HEADER, SESSION_COOKIE, csrf_matches

PASSKEY_COOKIE = "timebot_passkey"


class Refused(ServiceError):
    """A passkey request refused before the service was asked: answered with `status`."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _json(status: int, body: dict[str, Any], cookies: list[str] | None = None) -> Response:
    response = JSONResponse(body, status_code=status, headers={"cache-control": "no-store"})
    for cookie in cookies or []:
        response.headers.append("set-cookie", cookie)
    return response


def passkey_routes(pages: PageContext) -> list[BaseRoute]:
    config = pages.service.executor.signin

    def relying_party(request: Request) -> RelyingParty:
        if not pages.same_origin(request):
            raise Refused(403, "This request came from another site: nothing was changed.")
        host = request.headers.get("host", "")
        hostname = urlsplit(f"//{host}").hostname or ""
        public = urlsplit(pages.config.public_url).hostname
        if hostname not in (public, "localhost"):
            raise Refused(400, f"Passkeys work at {pages.config.public_url}.")
        return RelyingParty(hostname, f"{request.url.scheme}://{host}")

    async def signed_in_checked(request: Request) -> SignedIn:
        signed_in = await pages.signed_in(request)
        token = request.cookies.get(SESSION_COOKIE)
        if signed_in is None or token is None:
            raise Refused(401, "Sign in first.")
        if not csrf_matches(token, request.headers.get(CSRF_HEADER)):
            raise Refused(403, "Missing or wrong X-Timebot-CSRF header: nothing was changed.")
        if signed_in.took_over_by is not None:
            raise Refused(400, "An administrator acting as someone cannot add their passkey.")
        return signed_in

    async def body_of(request: Request) -> Any:
        try:
            return json.loads(await request.body() or b"null")
        except ValueError as error:
            raise Refused(400, 'Invalid argument "credential": not JSON') from error

    def endpoint(handler: Any) -> Any:
        async def run(request: Request) -> Response:
            try:
                return await handler(request)  # type: ignore[no-any-return]
            except Refused as refused:
                return _json(refused.status, {"error": refused.message})
            except ServiceError as error:
                return _json(400, {"error": error.message})

        return run

    async def register_options(request: Request) -> Response:
        rp = relying_party(request)
        signed_in = await signed_in_checked(request)
        cookie = passkeys.new_cookie()
        async with unit_of_work(pages.service.sessions) as session:
            options = await passkeys.registration_options(
                session, rp, signed_in.person, cookie, pages.service.clock.now_ms()
            )
        return _json(200, json.loads(options), [config.set_cookie(PASSKEY_COOKIE, cookie, 300)])

    async def register(request: Request) -> Response:
        rp = relying_party(request)
        signed_in = await signed_in_checked(request)
        payload = await body_of(request)
        now = pages.service.clock.now_ms()
        async with unit_of_work(pages.service.sessions) as session:
            person = await session.get(Person, signed_in.person.id)
            assert person is not None
            await passkeys.register(
                session, rp, person, request.cookies.get(PASSKEY_COOKIE, ""), payload, now
            )
            session.add(AuditTrail(
                organisation_id=person.organisation_id, operation_name="registerPasskey",
                person_id=person.id, timestamp_ms=now, arguments={},
                response_id=person.id, response_ids=[person.id],
            ))
        return _json(200, {"ok": True}, [config.set_cookie(PASSKEY_COOKIE, "", 0)])

    async def signin_options(request: Request) -> Response:
        rp = relying_party(request)
        cookie = passkeys.new_cookie()
        async with unit_of_work(pages.service.sessions) as session:
            options = await passkeys.signin_options(
                session, rp, cookie, pages.service.clock.now_ms()
            )
        return _json(200, json.loads(options), [config.set_cookie(PASSKEY_COOKIE, cookie, 300)])

    async def sign_in(request: Request) -> Response:
        rp = relying_party(request)
        payload = await body_of(request)
        now = pages.service.clock.now_ms()
        client = request.client.host if request.client else ""
        async with unit_of_work(pages.service.sessions) as session:
            person = await passkeys.sign_in(
                session, rp, request.cookies.get(PASSKEY_COOKIE), payload, now
            )
            opened = await open_session(
                session, person, now, request.headers.get("user-agent", ""), client, "passkey"
            )
            session.add(AuditTrail(
                organisation_id=person.organisation_id, operation_name="signin",
                person_id=person.id, timestamp_ms=now, arguments={"method": "passkey"},
                response_id=person.id, response_ids=[person.id],
            ))
        return _json(200, {"location": "/account"}, [
            config.set_cookie(SESSION_COOKIE, opened.token, SESSION_MS // 1000),
            config.set_cookie(PASSKEY_COOKIE, "", 0),
        ])

    return [
        Route("/account/passkey/options", endpoint(register_options), methods=["POST"]),
        Route("/account/passkey/register", endpoint(register), methods=["POST"]),
        Route("/signin/passkey/options", endpoint(signin_options), methods=["POST"]),
        Route("/signin/passkey", endpoint(sign_in), methods=["POST"]),
    ]
