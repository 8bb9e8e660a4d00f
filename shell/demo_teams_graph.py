"""Microsoft Graph of the fake Teams (shell/demo_teams.py), what its routes answer: a user's
automatic replies and presence (kinds "replies", "presence"), and proactive installation (kinds
"user", "catalog", "install", "installed", "chat"), each call recorded in the fake's `calls`
and failing on demand (`fail(kind, status, user)`), with a token of the user's own tenant (a
user of another tenant is 404, as Graph answers)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route


@dataclass
class ConnectorCall:
    kind: str  # "send", "update", "create", "member"
    conversation_id: str
    body: dict[str, Any]
    token: str
    at: float
    activity_id: str = ""


@dataclass
class FakeMember:
    user_id: str
    aad_object_id: str
    email: str
    tenant_id: str
    name: str
    conversation_id: str



class FakeTeams(Protocol):
    """What Graph's routes read of the fake Teams (shell.demo_teams.FakeTeams)."""

    app_id: str
    base_url: str
    catalog_id: str
    calls: list[ConnectorCall]
    members: dict[str, FakeMember]
    failures: list[tuple[str, int, str | None]]
    graph_tokens: dict[str, str]
    graph_open: asyncio.Event
    auto_replies: dict[str, dict[str, Any]]
    presences: dict[str, dict[str, Any]]
    installed: set[str]

    def note(self, kind: str, target: str, body: dict[str, Any], token: str
             ) -> ConnectorCall: ...



class FakeGraph:
    def __init__(self, fake: FakeTeams) -> None:
        self.fake = fake

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/v1.0/users/{user}/mailboxSettings/automaticRepliesSetting", self._graph,
                  methods=["GET"]),
            Route("/v1.0/users/{user}/presence", self._graph, methods=["GET"]),
            Route("/v1.0/users/{user}", self._graph_user, methods=["GET"]),
            Route("/v1.0/appCatalogs/teamsApps", self._catalog, methods=["GET"]),
            Route("/v1.0/users/{user}/teamwork/installedApps", self._install,
                  methods=["POST"]),
            Route("/v1.0/users/{user}/teamwork/installedApps", self._installations,
                  methods=["GET"]),
            Route("/v1.0/users/{user}/teamwork/installedApps/{installation}/chat",
                  self._installed_chat, methods=["GET"]),
        ]

    async def _graph(self, request: Request) -> Response:
        user = request.path_params["user"]
        kind = "presence" if request.url.path.endswith("/presence") else "replies"
        scheme, _space, token = request.headers.get("authorization", "").partition(" ")
        tenant = self.fake.graph_tokens.get(token) if scheme.lower() == "bearer" else None
        if tenant is None:
            return JSONResponse({"error": {"code": "InvalidAuthenticationToken"}},
                                status_code=401)
        self.fake.note(kind, user, {}, token)
        await self.fake.graph_open.wait()
        for index, (failing, status, where) in enumerate(self.fake.failures):
            if failing == kind and where in (None, user):
                del self.fake.failures[index]
                return JSONResponse({"error": {"code": str(status)}}, status_code=status,
                                    headers={"Retry-After": "60"} if status == 429 else None)
        member = next((m for m in self.fake.members.values() if m.aad_object_id == user), None)
        if member is None or member.tenant_id != tenant:
            return JSONResponse({"error": {"code": "ResourceNotFound"}}, status_code=404)
        if kind == "presence":
            return JSONResponse({"id": user, "availability": "Available",
                                 "activity": "Available", "outOfOfficeSettings": {
                                     "message": None, "isOutOfOffice": False},
                                 **self.fake.presences.get(user, {})})
        return JSONResponse({
            "@odata.context": f"{self.fake.base_url}/v1.0/$metadata#users('{user}')/mailboxSettings"
                              "/automaticRepliesSetting",
            **self.fake.auto_replies.get(user, {"status": "disabled", "externalAudience": "all"})})

    async def _graph_call(self, request: Request, kind: str, user: str
                          ) -> tuple[FakeMember | None, Response | None]:
        """A Graph call of `kind` for `user` (object id or e-mail) with a tenant's token,
        recorded: the member it names in that tenant (None: another tenant's, or nobody), or
        the error answered (no token, a failure asked for)."""
        scheme, _space, token = request.headers.get("authorization", "").partition(" ")
        tenant = self.fake.graph_tokens.get(token) if scheme.lower() == "bearer" else None
        if tenant is None:
            return None, JSONResponse({"error": {"code": "InvalidAuthenticationToken"}},
                                      status_code=401)
        body = await request.json() if request.method == "POST" else {}
        self.fake.note(kind, user, body, token)
        await self.fake.graph_open.wait()
        for index, (failing, status, where) in enumerate(self.fake.failures):
            if failing == kind and where in (None, user):
                del self.fake.failures[index]
                return None, JSONResponse({"error": {"code": str(status)}}, status_code=status)
        member = next((m for m in self.fake.members.values()
                       if user in (m.aad_object_id, m.email.lower())), None)
        return (member if member is not None and member.tenant_id == tenant else None), None

    @staticmethod
    def _not_found() -> Response:
        return JSONResponse({"error": {"code": "ResourceNotFound"}}, status_code=404)

    async def _graph_user(self, request: Request) -> Response:
        member, refused = await self._graph_call(request, "user",
                                                 request.path_params["user"].lower())
        if refused is not None or member is None:
            return refused or self._not_found()
        return JSONResponse({"id": member.aad_object_id, "mail": member.email,
                             "userPrincipalName": member.email, "displayName": member.name})

    async def _catalog(self, request: Request) -> Response:
        _member, refused = await self._graph_call(request, "catalog", "")
        if refused is not None:
            return refused
        wanted = f"externalId eq '{self.fake.app_id}'"
        found = request.query_params.get("$filter") == wanted
        return JSONResponse({"value": [{"id": self.fake.catalog_id, "externalId": self.fake.app_id,
                                        "displayName": "timebot",
                                        "distributionMethod": "organization"}]
                             if found else []})

    async def _install(self, request: Request) -> Response:
        member, refused = await self._graph_call(request, "install",
                                                 request.path_params["user"])
        if refused is not None or member is None:
            return refused or self._not_found()
        bound = str(self.fake.calls[-1].body.get("teamsApp@odata.bind") or "")
        if bound != f"{self.fake.base_url}/v1.0/appCatalogs/teamsApps/{self.fake.catalog_id}":
            return JSONResponse({"error": {"code": "BadRequest"}}, status_code=400)
        if member.aad_object_id in self.fake.installed:
            return JSONResponse({"error": {"code": "Conflict"}}, status_code=409)
        self.fake.installed.add(member.aad_object_id)
        return Response(status_code=201)

    def _installation_id(self, member: FakeMember) -> str:
        return f"{member.aad_object_id}##{self.fake.catalog_id}"

    async def _installations(self, request: Request) -> Response:
        member, refused = await self._graph_call(request, "installed",
                                                 request.path_params["user"])
        if refused is not None or member is None:
            return refused or self._not_found()
        wanted = f"teamsApp/externalId eq '{self.fake.app_id}'"
        mine = member.aad_object_id in self.fake.installed and (
            request.query_params.get("$filter") == wanted)
        return JSONResponse({"value": [{"id": self._installation_id(member), "teamsApp": {
            "id": self.fake.catalog_id, "externalId": self.fake.app_id}}] if mine else []})

    async def _installed_chat(self, request: Request) -> Response:
        member, refused = await self._graph_call(request, "chat", request.path_params["user"])
        if refused is not None or member is None:
            return refused or self._not_found()
        if (member.aad_object_id not in self.fake.installed
                or request.path_params["installation"] != self._installation_id(member)):
            return self._not_found()
        return JSONResponse({"id": member.conversation_id, "chatType": "oneOnOne"})

