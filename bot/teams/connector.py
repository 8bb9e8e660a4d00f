"""The Bot Connector, as the bot calls it: an app token from the token service (client
credentials of TEAMS_APP_ID with TEAMS_APP_PASSWORD, or a client assertion signed with
TEAMS_APP_CERTIFICATE), cached until shortly before it expires; activities sent and updated,
a member looked up, a personal conversation created. Only to service URLs
`TeamsEndpoints.check_service_url` accepts (the caller passes the one recorded for the tenant,
or the one a verified activity named)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import jwt
import structlog
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding

from bot.teams.endpoints import SCOPE, TeamsEndpoints

log = structlog.get_logger("timebot.teams.connector")

EARLY_SECONDS = 300.0  # a token is renewed this long before it expires
TIMEOUT = httpx.Timeout(10.0, connect=5.0)


class ConnectorError(Exception):
    """The connector (or the token service) answered an error: `status` (0: unreachable),
    `retry_after` seconds when it said (429)."""

    def __init__(self, status: int, message: str, retry_after: float | None = None) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.retry_after = retry_after

    @property
    def gone(self) -> bool:
        """The conversation or the app is not there any more (removed, uninstalled)."""
        return self.status in (403, 404)


@dataclass(frozen=True)
class Credentials:
    app_id: str
    password: str | None = None
    certificate_pem: bytes | None = None  # the PEM file: private key and certificate

    @classmethod
    def of(cls, app_id: str, password: str | None, certificate_path: str | None
           ) -> Credentials:
        if certificate_path and not password:
            return cls(app_id, certificate_pem=Path(certificate_path).read_bytes())
        return cls(app_id, password=password)

    def form(self, token_url: str, scope: str = SCOPE) -> dict[str, str]:
        """The client-credentials request's fields."""
        fields = {"grant_type": "client_credentials", "client_id": self.app_id,
                  "scope": scope}
        if self.certificate_pem is None:
            fields["client_secret"] = self.password or ""
            return fields
        certificate = x509.load_pem_x509_certificate(self.certificate_pem)
        thumbprint = base64.urlsafe_b64encode(
            hashlib.sha1(certificate.public_bytes(Encoding.DER)).digest()
        ).rstrip(b"=").decode()
        now = int(time.time())
        assertion = jwt.encode(
            {"aud": token_url, "iss": self.app_id, "sub": self.app_id, "jti": str(uuid.uuid4()),
             "nbf": now, "exp": now + 600},
            self.certificate_pem, algorithm="RS256", headers={"x5t": thumbprint})
        fields["client_assertion_type"] = (
            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
        fields["client_assertion"] = assertion
        return fields


class AppTokens:
    """The app's own token for the connector (or, with `token_url` and `scope`, for another
    resource at another authority: a tenant's Graph), fetched once and shared until it
    expires."""

    def __init__(self, http: httpx.AsyncClient, endpoints: TeamsEndpoints,
                 credentials: Credentials, *, token_url: str | None = None,
                 scope: str = SCOPE) -> None:
        self.http, self.endpoints, self.credentials = http, endpoints, credentials
        self.token_url, self.scope = token_url or endpoints.token, scope
        self._token: tuple[float, str] | None = None
        self._lock = asyncio.Lock()

    async def token(self) -> str:
        cached = self._token
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
        async with self._lock:
            cached = self._token
            if cached is not None and cached[0] > time.monotonic():
                return cached[1]
            try:
                answer = await self.http.post(
                    self.token_url, data=self.credentials.form(self.token_url, self.scope),
                    timeout=TIMEOUT)
            except httpx.HTTPError as error:
                raise ConnectorError(0, f"token service unreachable: {error}") from error
            if answer.status_code != 200:
                raise ConnectorError(answer.status_code, "token refused")
            body = answer.json()
            lifetime = float(body.get("expires_in") or 3600)
            self._token = (time.monotonic() + max(lifetime - EARLY_SECONDS, 30.0),
                           str(body["access_token"]))
            return self._token[1]

    def forget(self) -> None:
        self._token = None


@dataclass(frozen=True)
class Member:
    """A conversation member as the connector tells it (TeamsInfo's member lookup)."""

    id: str
    aad_object_id: str
    email: str
    user_principal_name: str
    tenant_id: str
    name: str


class Connector:
    """Calls to the Bot Connector at a (checked) service URL, with the app's token."""

    def __init__(self, http: httpx.AsyncClient, endpoints: TeamsEndpoints,
                 tokens: AppTokens) -> None:
        self.http, self.endpoints, self.tokens = http, endpoints, tokens

    async def _call(self, method: str, service_url: str, path: str,
                    body: dict[str, Any] | None = None) -> dict[str, Any]:
        url = self.endpoints.check_service_url(service_url) + path.lstrip("/")
        for attempt in range(2):
            headers = {"Authorization": f"Bearer {await self.tokens.token()}"}
            try:
                answer = await self.http.request(method, url, json=body, headers=headers,
                                                 timeout=TIMEOUT)
            except httpx.HTTPError as error:
                raise ConnectorError(0, f"connector unreachable: {error}") from error
            if answer.status_code == 401 and attempt == 0:
                self.tokens.forget()  # a token revoked or rotated early: once more, fresh
                continue
            if answer.status_code >= 300:
                retry = answer.headers.get("Retry-After")
                raise ConnectorError(answer.status_code, answer.text[:200],
                                     float(retry) if retry and retry.isdigit() else None)
            try:
                parsed = answer.json() if answer.content else {}
            except ValueError:
                parsed = {}
            return parsed if isinstance(parsed, dict) else {}
        raise ConnectorError(401, "app token refused")

    async def send(self, service_url: str, conversation_id: str,
                   activity: dict[str, Any]) -> str:
        """The new activity's id."""
        answer = await self._call("POST", service_url,
                                  f"v3/conversations/{quote(conversation_id, safe='')}/activities",
                                  activity)
        return str(answer.get("id") or "")

    async def update(self, service_url: str, conversation_id: str, activity_id: str,
                     activity: dict[str, Any]) -> None:
        await self._call("PUT", service_url,
                         f"v3/conversations/{quote(conversation_id, safe='')}/activities/"
                         f"{quote(activity_id, safe='')}", {**activity, "id": activity_id})

    async def member(self, service_url: str, conversation_id: str, user_id: str) -> Member:
        answer = await self._call("GET", service_url,
                                  f"v3/conversations/{quote(conversation_id, safe='')}/members/"
                                  f"{quote(user_id, safe='')}")
        return Member(str(answer.get("id") or ""), str(answer.get("aadObjectId") or ""),
                      str(answer.get("email") or ""),
                      str(answer.get("userPrincipalName") or ""),
                      str(answer.get("tenantId") or ""), str(answer.get("name") or ""))

    async def create_personal(self, service_url: str, tenant_id: str, user_id: str,
                              bot_id: str) -> str:
        """The personal conversation between the bot and a user (created, or the one there)."""
        answer = await self._call("POST", service_url, "v3/conversations", {
            "bot": {"id": bot_id}, "members": [{"id": user_id}], "isGroup": False,
            "tenantId": tenant_id, "channelData": {"tenant": {"id": tenant_id}}})
        return str(answer.get("id") or "")
