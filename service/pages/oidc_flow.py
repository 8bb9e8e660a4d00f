"""The OpenID Connect authorization-code flow shared by every sign-in through an identity
provider (the organisation's custom provider and the deployment's Google and Microsoft):
discovery, the authorization redirect (Authlib: state, nonce, PKCE S256), the flow's state in
a short-lived cookie signed with the process's secret key and taken once (`consume`), and the
code exchange with the ID token's checks (joserfc: signature, issuer, audience, expiry, nonce)
before its e-mail address is trusted.
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
from sqlalchemy import delete
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.responses import RedirectResponse

from plumbing.db import unit_of_work
from service.errors import ServiceError
from service.outbound import AddressRefused
from service.signin.models import UsedSsoState
from service.signin.web import SigninConfig

SSO_COOKIE = "timebot_sso"
FLOW_SECONDS = 600
# Microsoft's multi-tenant endpoints ("common", "organizations") publish this placeholder as
# their issuer; each ID token's `iss` names the tenant (`tid`) it comes from.
TENANT_PLACEHOLDER = "{tenantid}"


class SsoRefused(ServiceError):
    """A sign-in through an identity provider was refused; the message says why."""


@dataclass
class Provider:
    issuer: str
    client_id: str
    client_secret: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str | None
    userinfo_endpoint: str | None

    def issued(self, claims: dict[str, Any]) -> bool:
        """Whether the ID token's `iss` is this provider's (Google also writes it without
        the scheme; Microsoft's multi-tenant issuer names the token's tenant)."""
        expected = self.issuer.replace(TENANT_PLACEHOLDER, str(claims.get("tid") or "?"))
        given = str(claims.get("iss", "")).rstrip("/")
        return given == expected or f"https://{given}" == expected


def sign(secret: str, payload: dict[str, Any]) -> str:
    body = base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")
    mac = hmac.new(secret.encode(), body.encode(), hashlib.sha256).hexdigest()
    return f"{body}.{mac}"


def unsign(secret: str, value: str | None) -> dict[str, Any]:
    body, _, mac = (value or "").partition(".")
    expected = hmac.new(secret.encode(), body.encode(), hashlib.sha256).hexdigest()
    if not body or not hmac.compare_digest(mac, expected):
        raise SsoRefused("The sign-in attempt was not started in this browser: try again.")
    payload: dict[str, Any] = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    if payload.get("exp", 0) < time.time():
        raise SsoRefused("The sign-in attempt has expired: try again.")
    return payload


async def consume(sessions: async_sessionmaker[AsyncSession], flow: dict[str, Any]) -> None:
    """Take the flow's callback once: its state is recorded (until the flow's cookie expires,
    by the same wall clock) in the callback's first step, before the provider is asked; a
    second callback with the same state (a replayed URL and cookie, a double submit) is
    refused, whatever its code."""
    now_ms = int(time.time() * 1000)
    state = hashlib.sha256(str(flow.get("state")).encode()).hexdigest()
    try:
        async with unit_of_work(sessions) as session:
            await session.execute(delete(UsedSsoState).where(UsedSsoState.expires_ms < now_ms))
            session.add(UsedSsoState(state_digest=state,
                                     expires_ms=int(float(flow.get("exp", 0)) * 1000) + 1))
            await session.flush()
    except IntegrityError:
        raise SsoRefused("This sign-in attempt was already used: start again.") from None


async def discover(http: httpx.AsyncClient, configured: dict[str, Any]) -> Provider:
    """The provider from its discovery document; `configured` holds issuer, clientId,
    clientSecret and optionally authorizationUrl / tokenUrl (the "Other provider" case)."""
    issuer = str(configured["issuer"]).rstrip("/")
    metadata: dict[str, Any] = {}
    try:
        response = await http.get(f"{issuer}/.well-known/openid-configuration")
        if response.status_code == 200:
            metadata = response.json()
    except httpx.HTTPError as error:
        if isinstance(error.__cause__, AddressRefused):
            raise unreachable("discovery", error) from error
        metadata = {}
    except ValueError:
        metadata = {}
    if not isinstance(metadata, dict):
        metadata = {}
    authorization = configured.get("authorizationUrl") or metadata.get("authorization_endpoint")
    token = configured.get("tokenUrl") or metadata.get("token_endpoint")
    if not authorization or not token:
        raise SsoRefused(f"The identity provider {issuer} could not be reached (discovery).")
    return Provider(
        issuer=str(metadata.get("issuer") or issuer).rstrip("/"),
        client_id=str(configured["clientId"]),
        client_secret=str(configured["clientSecret"]),
        authorization_endpoint=str(authorization),
        token_endpoint=str(token),
        jwks_uri=metadata.get("jwks_uri"),
        userinfo_endpoint=metadata.get("userinfo_endpoint"),
    )


def start(provider: Provider, redirect_uri: str, secret: str, config: SigninConfig,
          **flow_values: Any) -> RedirectResponse:
    """The redirect to the provider, with the flow's state in the signed cookie
    (`flow_values` travel in it too, e.g. which organisation the sign-in is for)."""
    state, nonce, verifier = generate_token(32), generate_token(32), generate_token(48)
    url = prepare_grant_uri(
        provider.authorization_endpoint, provider.client_id, "code",
        redirect_uri=redirect_uri, scope="openid email profile", state=state, nonce=nonce,
        code_challenge=create_s256_code_challenge(verifier), code_challenge_method="S256",
    )
    flow = {**flow_values, "state": state, "nonce": nonce, "verifier": verifier,
            "exp": time.time() + FLOW_SECONDS}
    response = RedirectResponse(url, status_code=303)
    response.headers.append(
        "set-cookie", config.set_cookie(SSO_COOKIE, sign(secret, flow), FLOW_SECONDS),
    )
    return response


def returned_flow(secret: str, cookie: str | None, params: Any, **expected: Any
                  ) -> dict[str, Any]:
    """The flow this browser started, checked against the callback's parameters."""
    if params.get("error"):
        raise SsoRefused(f"The identity provider said: {params.get('error')}.")
    flow = unsign(secret, cookie)
    if any(flow.get(key) != value for key, value in expected.items()) or not hmac.compare_digest(
        str(flow.get("state")), params.get("state", "")
    ):
        raise SsoRefused("The sign-in attempt does not match this browser's: try again.")
    return flow


def unreachable(what: str, error: Exception) -> SsoRefused:
    """The refusal of a provider that could not be asked (the outbound policy's reason when
    it refused the address)."""
    if isinstance(error.__cause__, AddressRefused):
        return SsoRefused(f"The identity provider's {what} is not reachable from here: "
                          f"{error.__cause__}.")
    return SsoRefused(f"The identity provider could not be reached ({what}).")


async def identity(http: httpx.AsyncClient, provider: Provider, code: str,
                   flow: dict[str, Any], redirect_uri: str) -> dict[str, Any]:
    """The ID token's claims (completed from userinfo when it has no e-mail address), asked
    through `http` (for a custom provider: service/outbound.py's client, public addresses
    only). A provider that cannot be reached or answers nonsense is refused."""
    try:
        return await _identity(http, provider, code, flow, redirect_uri)
    except httpx.HTTPError as error:
        raise unreachable("token, keys or userinfo endpoint", error) from error
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        raise SsoRefused("The identity provider's answer could not be read.") from error


async def _identity(http: httpx.AsyncClient, provider: Provider, code: str,
                    flow: dict[str, Any], redirect_uri: str) -> dict[str, Any]:
    answer = await http.post(
        provider.token_endpoint,
        data={"grant_type": "authorization_code", "code": code,
              "redirect_uri": redirect_uri, "code_verifier": flow["verifier"]},
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
        not provider.issued(claims)
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
