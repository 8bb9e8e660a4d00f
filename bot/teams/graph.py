"""Microsoft Graph, as the bot reads it: a user's automatic replies
(`GET /users/{id}/mailboxSettings/automaticRepliesSetting`, application permission
MailboxSettings.Read) and their presence (`GET /users/{id}/presence`, Presence.Read.All), with
an app-only token of the user's own tenant (client credentials of the app, the same as the
Bot Connector's — bot.teams.connector `Credentials` — at the tenant's authority, scope
`https://graph.microsoft.com/.default`), one token per tenant, cached until shortly before it
expires. Graph's base is Microsoft's, or under TIMEBOT_TEAMS_API_URL (bot.teams.endpoints).

Every failure is a `GraphError`: its status (0: unreachable or timed out; 403: the permission
not granted in that tenant; 404: no such user or no mailbox; 429: throttled, with
`retry_after`)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from bot.teams.connector import AppTokens, ConnectorError, Credentials
from bot.teams.endpoints import GRAPH_SCOPE, TeamsEndpoints, UntrustedUrl

TIMEOUT = httpx.Timeout(5.0, connect=3.0)
REPLIES_PATH = "mailboxSettings/automaticRepliesSetting"
PRESENCE_PATH = "presence"


class GraphError(Exception):
    def __init__(self, status: int, message: str, retry_after: float | None = None) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.retry_after = retry_after


def retry_after_of(value: str | None) -> float | None:
    """Pure: a Retry-After header in seconds (Graph gives seconds; anything else: unknown)."""
    try:
        return max(float(value), 0.0) if value else None
    except ValueError:
        return None


class GraphClient:
    def __init__(self, http: httpx.AsyncClient, endpoints: TeamsEndpoints,
                 credentials: Credentials, timeout: httpx.Timeout = TIMEOUT) -> None:
        self.http, self.endpoints, self.credentials = http, endpoints, credentials
        self.timeout = timeout
        self._tokens: dict[str, AppTokens] = {}

    def _tokens_of(self, tenant_id: str) -> AppTokens:
        tokens = self._tokens.get(tenant_id)
        if tokens is None:
            tokens = self._tokens[tenant_id] = AppTokens(
                self.http, self.endpoints, self.credentials,
                token_url=self.endpoints.tenant_token(tenant_id), scope=GRAPH_SCOPE)
        return tokens

    async def request(self, method: str, tenant_id: str, path: str, *,
                      body: dict[str, Any] | None = None,
                      params: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
        """One call to Graph in the tenant, as the app: its status (2xx, or 409 for a POST:
        already there) and the JSON object answered ({} when empty); any other status is a
        GraphError."""
        try:
            tokens = self._tokens_of(tenant_id)
        except UntrustedUrl as error:
            raise GraphError(0, str(error)) from error
        url = f"{self.endpoints.graph}/{path}"
        for attempt in range(2):
            try:
                headers = {"Authorization": f"Bearer {await tokens.token()}"}
            except ConnectorError as error:
                raise GraphError(error.status, f"token: {error}") from error
            try:
                answer = await self.http.request(method, url, headers=headers, json=body,
                                                 params=params, timeout=self.timeout)
            except httpx.HTTPError as error:
                raise GraphError(0, f"Graph unreachable: {type(error).__name__}") from error
            if answer.status_code == 401 and attempt == 0:
                tokens.forget()  # a token revoked or rotated early: once more, fresh
                continue
            if not (200 <= answer.status_code < 300
                    or (answer.status_code == 409 and method == "POST")):
                raise GraphError(answer.status_code, _error_code(answer),
                                 retry_after_of(answer.headers.get("Retry-After")))
            if not answer.content:
                return answer.status_code, {}
            try:
                parsed = answer.json()
            except ValueError as error:
                raise GraphError(answer.status_code, "not JSON") from error
            if not isinstance(parsed, dict):
                raise GraphError(answer.status_code, "not a JSON object")
            return answer.status_code, parsed
        raise GraphError(401, "app token refused")

    async def user_get(self, tenant_id: str, user_id: str, path: str) -> dict[str, Any]:
        """GET /users/{user_id}/{path} in the tenant, as the app; the JSON object answered."""
        return (await self.request("GET", tenant_id,
                                   f"users/{quote(user_id, safe='')}/{path}"))[1]

    async def automatic_replies(self, tenant_id: str, user_id: str) -> dict[str, Any]:
        return await self.user_get(tenant_id, user_id, REPLIES_PATH)

    async def presence(self, tenant_id: str, user_id: str) -> dict[str, Any]:
        return await self.user_get(tenant_id, user_id, PRESENCE_PATH)


def _error_code(answer: httpx.Response) -> str:
    """Graph's error code (`{"error": {"code": …}}`), or the start of the body."""
    try:
        body = answer.json()
    except ValueError:
        return answer.text[:100]
    error = body.get("error") if isinstance(body, dict) else None
    return str(error.get("code") if isinstance(error, dict) else body)[:100]
