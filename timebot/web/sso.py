"""Single sign-on with the organisation's custom OpenID Connect provider (Authlib for the
authorization request and PKCE, joserfc for the ID token): GET /sso/<org>/custom/initiate
sends the browser to the provider, GET /sso/<org>/custom/callback opens the session.

The flow's state (state, nonce, PKCE verifier) travels in a short-lived cookie signed with
the process's secret key; the ID token's signature, issuer, audience, expiry and nonce are
checked before its e-mail address is trusted.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from dataclasses import dataclass
from typing import Any

import httpx
from authlib.common.security import generate_token
from authlib.oauth2.rfc6749.parameters import prepare_grant_uri
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from service.db import unit_of_work
from service.errors import ServiceError
from service.models import AuditTrail, Organisation
from service.signin.sessions import SESSION_MS, open_session
from service.signin.sso import callback_path, custom_provider, person_for_login
from service.signin.web import SESSION_COOKIE
from timebot.web.common import WebFront, page

SSO_COOKIE = "timebot_sso"
FLOW_SECONDS = 600


class SsoRefused(Exception):
    pass


@dataclass
class Provider:
    issuer: str
    client_id: str
    client_secret: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str | None
    userinfo_endpoint: str | None


def _sign(secret: str, payload: dict[str, Any]) -> str:
    body = base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")
    mac = hmac.new(secret.encode(), body.encode(), hashlib.sha256).hexdigest()
    return f"{body}.{mac}"


def _unsign(secret: str, value: str | None) -> dict[str, Any]:
    body, _, mac = (value or "").partition(".")
    expected = hmac.new(secret.encode(), body.encode(), hashlib.sha256).hexdigest()
    if not body or not hmac.compare_digest(mac, expected):
        raise SsoRefused("The sign-in attempt was not started in this browser: try again.")
    payload: dict[str, Any] = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    if payload.get("exp", 0) < time.time():
        raise SsoRefused("The sign-in attempt has expired: try again.")
    return payload


async def _provider(http: httpx.AsyncClient, custom: dict[str, Any]) -> Provider:
    issuer = str(custom["issuer"]).rstrip("/")
    metadata: dict[str, Any] = {}
    try:
        response = await http.get(f"{issuer}/.well-known/openid-configuration")
        if response.status_code == 200:
            metadata = response.json()
    except (httpx.HTTPError, ValueError):
        metadata = {}
    authorization = custom.get("authorizationUrl") or metadata.get("authorization_endpoint")
    token = custom.get("tokenUrl") or metadata.get("token_endpoint")
    if not authorization or not token:
        raise SsoRefused(f"The identity provider {issuer} could not be reached (discovery).")
    return Provider(
        issuer=str(metadata.get("issuer") or issuer).rstrip("/"),
        client_id=str(custom["clientId"]),
        client_secret=str(custom["clientSecret"]),
        authorization_endpoint=str(authorization),
        token_endpoint=str(token),
        jwks_uri=metadata.get("jwks_uri"),
        userinfo_endpoint=metadata.get("userinfo_endpoint"),
    )


def sso_routes(front: WebFront) -> list[BaseRoute]:
    settings = front.runtime.settings
    config = front.service.executor.signin

    async def organisation_of(org_id: str) -> tuple[Organisation, dict[str, Any]]:
        async with front.service.read_sessions() as session:
            organisation = await session.get(Organisation, org_id)
        custom = custom_provider(organisation) if organisation is not None else None
        if organisation is None or custom is None:
            raise SsoRefused("No single sign-on is configured at this address.")
        return organisation, custom

    def refused(message: str, status: int = 400) -> Response:
        return page("signin.html", status, step="email", email="", error=message)

    async def initiate(request: Request) -> Response:
        org_id = request.path_params["org_id"]
        try:
            _organisation, custom = await organisation_of(org_id)
            async with httpx.AsyncClient(timeout=10) as http:
                provider = await _provider(http, custom)
        except SsoRefused as error:
            return refused(str(error), 404)
        state, nonce, verifier = generate_token(32), generate_token(32), generate_token(48)
        url = prepare_grant_uri(
            provider.authorization_endpoint, provider.client_id, "code",
            redirect_uri=f"{settings.public_url}{callback_path(org_id)}",
            scope="openid email profile", state=state, nonce=nonce,
            code_challenge=create_s256_code_challenge(verifier), code_challenge_method="S256",
        )
        flow = {"org": org_id, "state": state, "nonce": nonce, "verifier": verifier,
                "exp": time.time() + FLOW_SECONDS}
        response = RedirectResponse(url, status_code=303)
        response.headers.append(
            "set-cookie", config.set_cookie(SSO_COOKIE, _sign(settings.secret_key, flow),
                                            FLOW_SECONDS),
        )
        return response

    async def identity(provider: Provider, code: str, flow: dict[str, Any], org_id: str
                       ) -> dict[str, Any]:
        async with httpx.AsyncClient(timeout=10) as http:
            answer = await http.post(
                provider.token_endpoint,
                data={"grant_type": "authorization_code", "code": code,
                      "redirect_uri": f"{settings.public_url}{callback_path(org_id)}",
                      "code_verifier": flow["verifier"]},
                auth=(provider.client_id, provider.client_secret),
            )
            if answer.status_code != 200:
                raise SsoRefused("The identity provider refused the sign-in (token request).")
            tokens = answer.json()
            if not provider.jwks_uri or "id_token" not in tokens:
                raise SsoRefused("The identity provider sent no verifiable ID token.")
            keys = KeySet.import_key_set((await http.get(provider.jwks_uri)).json())
            try:
                claims = dict(jwt.decode(tokens["id_token"], keys).claims)
            except (JoseError, ValueError) as error:
                raise SsoRefused("The ID token's signature is not valid.") from error
            audience = claims.get("aud")
            audiences = audience if isinstance(audience, list) else [audience]
            if (
                str(claims.get("iss", "")).rstrip("/") != provider.issuer
                or provider.client_id not in audiences
                or float(claims.get("exp", 0)) < time.time()
                or claims.get("nonce") != flow["nonce"]
            ):
                raise SsoRefused("The ID token is not for this sign-in (issuer, audience, "
                                 "expiry or nonce).")
            if not claims.get("email") and provider.userinfo_endpoint:
                info = await http.get(
                    provider.userinfo_endpoint,
                    headers={"authorization": f"Bearer {tokens.get('access_token', '')}"},
                )
                if info.status_code == 200 and info.json().get("sub") == claims.get("sub"):
                    claims.update({k: v for k, v in info.json().items() if k != "sub"})
        if not claims.get("email") or claims.get("email_verified") is False:
            raise SsoRefused("The identity provider gave no verified e-mail address.")
        return claims

    async def callback(request: Request) -> Response:
        org_id = request.path_params["org_id"]
        params = request.query_params
        try:
            if params.get("error"):
                raise SsoRefused(f"The identity provider said: {params.get('error')}.")
            flow = _unsign(settings.secret_key, request.cookies.get(SSO_COOKIE))
            if flow.get("org") != org_id or not hmac.compare_digest(
                str(flow.get("state")), params.get("state", "")
            ):
                raise SsoRefused("The sign-in attempt does not match this browser's: try again.")
            organisation, custom = await organisation_of(org_id)
            async with httpx.AsyncClient(timeout=10) as http:
                provider = await _provider(http, custom)
            claims = await identity(provider, params.get("code", ""), flow, org_id)
            now = front.service.clock.now_ms()
            async with unit_of_work(front.service.sessions) as session:
                organisation = await session.get(Organisation, org_id) or organisation
                person = await person_for_login(
                    session, organisation, str(claims["email"]), str(claims.get("name") or ""),
                    now,
                )
                opened = await open_session(
                    session, person, now, request.headers.get("user-agent", ""),
                    request.client.host if request.client else "", "sso",
                )
                session.add(AuditTrail(
                    organisation_id=org_id, operation_name="signin", person_id=person.id,
                    timestamp_ms=now, arguments={"method": "sso"},
                    response_id=person.id, response_ids=[person.id],
                ))
        except (SsoRefused, ServiceError) as error:
            message = error.message if isinstance(error, ServiceError) else str(error)
            return refused(message, 403)
        response = RedirectResponse("/account", status_code=303)
        response.headers.append(
            "set-cookie", config.set_cookie(SESSION_COOKIE, opened.token, SESSION_MS // 1000)
        )
        response.headers.append("set-cookie", config.set_cookie(SSO_COOKIE, "", 0))
        return response

    return [
        Route("/sso/{org_id}/custom/initiate", initiate, methods=["GET"]),
        Route("/sso/{org_id}/custom/callback", callback, methods=["GET"]),
    ]
