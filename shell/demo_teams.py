"""A fake Microsoft Teams on loopback, for tests and the demo: the token issuer, the Bot
Connector and Microsoft Graph under one base URL (what TIMEBOT_TEAMS_API_URL names), the same
paths as Microsoft's.

- The issuer: OpenID metadata (`/v1/.well-known/openidconfiguration`) and its JWKS with an RSA
  key generated here; `sign(activity)` makes the JWT the Bot Framework sends with an activity
  (iss, aud = the app id, serviceurl, nbf/exp); the client-credentials token endpoint
  (`/botframework.com/oauth2/v2.0/token`) checks the app id and password; the admin-consent
  page (`/common/adminconsent`) redirects back with `tenant`, `admin_consent=True` and `state`
  as Microsoft's does (the tenant `consent_tenant` names).
- The connector (`/v3/conversations…`): activities sent and updated, a personal conversation
  created, a member looked up (id, aadObjectId, email, userPrincipalName, tenantId); every
  call needs a token the issuer gave; each is recorded (`calls`), and `fail(kind, status)`
  answers 429/403/404 on demand.
- Microsoft Graph (its routes: shell.demo_teams_graph): a user's automatic replies
  (`/v1.0/users/{id}/mailboxSettings/automaticRepliesSetting`, kind "replies") and presence
  (`/v1.0/users/{id}/presence`, kind "presence"), with a token of the user's own tenant
  (`/{tenant}/oauth2/v2.0/token`, scope Graph's): a member's automatic replies
  (`auto_replies`, disabled unless set) and presence (`presences`, Available unless set);
  another tenant's user is 404, as Graph answers; while `graph_open` is clear, Graph's answers
  wait for it (a slow Graph, a timeout).
- Proactive installation through Graph (kinds "user", "catalog", "install", "installed",
  "chat"): a user read by object id or e-mail (`/v1.0/users/{id or mail}`), the app found in
  the tenant's catalog by its manifest id (`/v1.0/appCatalogs/teamsApps?$filter=externalId eq
  '…'`, the catalog id `catalog_id`), installed for a user (`POST
  /v1.0/users/{id}/teamwork/installedApps`, 201; 409 when it is there already: `installed`),
  the user's installation of it listed, and its chat with the user (the member's personal
  conversation).

Loopback only: it binds 127.0.0.1, and refuses any other peer.

`timebot serve --demo` starts one beside the fake Slack (shell/demo_teams_page.py)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import secrets
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from plumbing.peers import is_loopback_address
from shell.demo_teams_graph import ConnectorCall, FakeGraph, FakeMember

__all__ = ["BOT_ID", "ConnectorCall", "FakeMember", "FakeTeams", "LoopbackOnly"]

ISSUER = "https://api.botframework.com"
KEY_ID = "fake-teams-key"
BOT_ID = "28:timebot-bot"


class LoopbackOnly:
    """Any peer but this machine is refused (403)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        client = scope.get("client")
        if scope["type"] == "http" and not (client and is_loopback_address(client[0])):
            await Response("loopback only", 403)(scope, receive, send)
            return
        await self.app(scope, receive, send)


@dataclass
class FakeTeams:
    app_id: str
    password: str
    base_url: str = ""
    consent_tenant: str = ""
    calls: list[ConnectorCall] = field(default_factory=list)
    members: dict[str, FakeMember] = field(default_factory=dict)
    tokens: set[str] = field(default_factory=set)
    token_requests: int = 0
    failures: list[tuple[str, int, str | None]] = field(default_factory=list)
    certificate: Any = None  # an x509.Certificate: client assertions signed by its key pass
    graph_tokens: dict[str, str] = field(default_factory=dict)  # token -> its tenant
    auto_replies: dict[str, dict[str, Any]] = field(default_factory=dict)  # by aadObjectId
    presences: dict[str, dict[str, Any]] = field(default_factory=dict)
    catalog_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    installed: set[str] = field(default_factory=set)  # aadObjectIds the app is installed for

    def __post_init__(self) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.changed = asyncio.Event()
        self.graph_open = asyncio.Event()
        self.graph_open.set()

    # --- the issuer ---------------------------------------------------------------------------

    @property
    def service_url(self) -> str:
        return self.base_url + "/"

    def sign(self, activity: dict[str, Any], *, audience: str | None = None,
             issuer: str = ISSUER, service_url: str | None = None,
             expires_in: int = 3600, key: Any = None) -> str:
        now = int(time.time())
        claims = {"iss": issuer, "aud": audience or self.app_id,
                  "serviceurl": service_url if service_url is not None
                  else activity.get("serviceUrl", ""),
                  "nbf": now - 5, "iat": now - 5, "exp": now + expires_in}
        return jwt.encode(claims, key or self.key, algorithm="RS256",
                          headers={"kid": KEY_ID})

    def jwks(self) -> dict[str, Any]:
        public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [{**public, "kid": KEY_ID, "use": "sig", "alg": "RS256",
                          "endorsements": ["msteams"]}]}

    # --- people and conversations -------------------------------------------------------------

    def add_member(self, tenant_id: str, email: str, name: str = "") -> FakeMember:
        member = FakeMember("29:" + uuid.uuid4().hex, str(uuid.uuid4()), email, tenant_id,
                            name or email.split("@")[0], "a:" + uuid.uuid4().hex)
        self.members[member.user_id] = member
        return member

    def message(self, member: FakeMember, text: str, **extra: Any) -> dict[str, Any]:
        """A message activity from `member` in their personal chat with the bot."""
        return {"type": "message", "id": uuid.uuid4().hex[:16], "channelId": "msteams",
                "serviceUrl": self.service_url, "text": text, "textFormat": "plain",
                "timestamp": "2026-12-02T10:00:00Z", "localTimezone": "Europe/Paris",
                "locale": "en-US",
                "from": {"id": member.user_id, "aadObjectId": member.aad_object_id,
                         "name": member.name},
                "recipient": {"id": BOT_ID, "name": "timebot"},
                "conversation": {"id": member.conversation_id, "conversationType": "personal",
                                 "tenantId": member.tenant_id},
                "channelData": {"tenant": {"id": member.tenant_id}}, **extra}

    def out_of_office(self, member: FakeMember, status: str, start: str | None = None,
                      end: str | None = None, time_zone: str = "UTC") -> None:
        """The member's automatic replies as Graph gives them (`start`/`end`: local times of
        `time_zone`, "2026-12-10T08:00:00")."""
        self.auto_replies[member.aad_object_id] = {
            "status": status, "externalAudience": "all",
            "internalReplyMessage": "I am out of office.", "externalReplyMessage": "",
            "scheduledStartDateTime": {"dateTime": (start or "2026-01-01T00:00:00") + ".0000000",
                                       "timeZone": time_zone},
            "scheduledEndDateTime": {"dateTime": (end or "2026-01-02T00:00:00") + ".0000000",
                                     "timeZone": time_zone}}

    def fail(self, kind: str, status: int, conversation_id: str | None = None,
             times: int = 1) -> None:
        self.failures.extend([(kind, status, conversation_id)] * times)

    def note(self, kind: str, target: str, body: dict[str, Any], token: str) -> ConnectorCall:
        """Record a call (the connector's, or Graph's: shell.demo_teams_graph)."""
        call = ConnectorCall(kind, target, body, token, time.time())
        self.calls.append(call)
        self.changed.set()
        return call

    def calls_to(self, kind: str, conversation_id: str | None = None) -> list[ConnectorCall]:
        return [call for call in self.calls if call.kind == kind and (
            conversation_id is None or call.conversation_id == conversation_id)]

    async def wait_for(self, kind: str, count: int = 1, conversation_id: str | None = None,
                       seconds: float = 20.0) -> list[ConnectorCall]:
        deadline = time.monotonic() + seconds
        while True:
            found = self.calls_to(kind, conversation_id)
            if len(found) >= count:
                return found
            if time.monotonic() > deadline:
                raise AssertionError(f"{len(found)} {kind} call(s), waited for {count}")
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), 0.2)
            except TimeoutError:
                pass

    # --- HTTP ---------------------------------------------------------------------------------

    def app(self, extra: list[BaseRoute] | None = None) -> Starlette:
        return Starlette(middleware=[Middleware(LoopbackOnly)], routes=[*(extra or []),
            Route("/v1/.well-known/openidconfiguration", self._metadata, methods=["GET"]),
            Route("/v1/.well-known/keys", self._keys, methods=["GET"]),
            Route("/botframework.com/oauth2/v2.0/token", self._token, methods=["POST"]),
            Route("/{tenant}/oauth2/v2.0/token", self._tenant_token, methods=["POST"]),
            *FakeGraph(self).routes(),
            Route("/common/adminconsent", self._consent, methods=["GET"]),
            Route("/v3/conversations", self._create, methods=["POST"]),
            Route("/v3/conversations/{conversation}/activities", self._send, methods=["POST"]),
            Route("/v3/conversations/{conversation}/activities/{activity}", self._update,
                  methods=["PUT"]),
            Route("/v3/conversations/{conversation}/members/{user}", self._member,
                  methods=["GET"]),
        ])

    async def _metadata(self, request: Request) -> Response:
        return JSONResponse({"issuer": ISSUER, "jwks_uri": self.base_url + "/v1/.well-known/keys",
                             "id_token_signing_alg_values_supported": ["RS256"]})

    async def _keys(self, request: Request) -> Response:
        return JSONResponse(self.jwks())

    async def _token(self, request: Request) -> Response:
        form = await request.form()
        self.token_requests += 1
        assertion = str(form.get("client_assertion") or "")
        if form.get("client_id") != self.app_id or not (
                (self.password and form.get("client_secret") == self.password)
                or (assertion and self._asserted(assertion, self.base_url + request.url.path))):
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        token = "fake-app-token-" + secrets.token_urlsafe(16)
        self.tokens.add(token)
        return JSONResponse({"token_type": "Bearer", "expires_in": 3600,
                             "access_token": token})

    async def _tenant_token(self, request: Request) -> Response:
        """A tenant's token service: Graph's scope only; the token is that tenant's."""
        form = await request.form()
        if form.get("scope") != "https://graph.microsoft.com/.default":
            return JSONResponse({"error": "invalid_scope"}, status_code=400)
        answer = await self._token(request)
        if answer.status_code == 200:
            token = str(json.loads(bytes(answer.body))["access_token"])
            self.tokens.discard(token)  # not the connector's
            self.graph_tokens[token] = request.path_params["tenant"]
        return answer

    def _asserted(self, assertion: str, audience: str) -> bool:
        """A client assertion signed by the registered certificate's key, naming the app, for
        the token endpoint asked (`audience`), with the certificate's thumbprint (x5t)."""
        if self.certificate is None:
            return False
        from cryptography.hazmat.primitives.serialization import Encoding

        thumbprint = base64.urlsafe_b64encode(hashlib.sha1(  # x5t is a SHA-1 thumbprint
            self.certificate.public_bytes(Encoding.DER)).digest()).rstrip(b"=").decode()
        try:
            if jwt.get_unverified_header(assertion).get("x5t") != thumbprint:
                return False
            claims = jwt.decode(assertion, self.certificate.public_key(), algorithms=["RS256"],
                                audience=audience,
                                issuer=self.app_id)
        except jwt.PyJWTError:
            return False
        return bool(claims.get("sub") == self.app_id)

    async def _consent(self, request: Request) -> Response:
        params = request.query_params
        if params.get("client_id") != self.app_id:
            return JSONResponse({"error": "unauthorized_client"}, status_code=400)
        back = {"tenant": self.consent_tenant, "admin_consent": "True",
                "state": params.get("state", "")}
        return RedirectResponse(params.get("redirect_uri", "") + "?" + urlencode(back),
                                status_code=302)

    async def _record(self, request: Request, kind: str, conversation_id: str
                      ) -> tuple[ConnectorCall | None, Response | None]:
        scheme, _space, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or token not in self.tokens:
            return None, JSONResponse({"error": {"code": "Unauthorized"}}, status_code=401)
        try:
            body = await request.json() if kind in ("send", "update", "create") else {}
        except ValueError:
            return None, JSONResponse({"error": {"code": "BadSyntax"}}, status_code=400)
        call = ConnectorCall(kind, conversation_id, body, token, time.time())
        for index, (failing, status, where) in enumerate(self.failures):
            if failing == kind and where in (None, conversation_id):
                del self.failures[index]
                self.calls.append(call)
                self.changed.set()
                return None, JSONResponse({"error": {"code": str(status)}}, status_code=status,
                                          headers={"Retry-After": "1"} if status == 429
                                          else None)
        self.calls.append(call)
        self.changed.set()
        return call, None

    async def _send(self, request: Request) -> Response:
        call, refused = await self._record(request, "send",
                                           request.path_params["conversation"])
        if call is None:
            assert refused is not None
            return refused
        call.activity_id = "1:" + uuid.uuid4().hex[:12]
        return JSONResponse({"id": call.activity_id}, status_code=201)

    async def _update(self, request: Request) -> Response:
        call, refused = await self._record(request, "update",
                                           request.path_params["conversation"])
        if call is None:
            assert refused is not None
            return refused
        call.activity_id = request.path_params["activity"]
        return JSONResponse({"id": call.activity_id})

    async def _create(self, request: Request) -> Response:
        call, refused = await self._record(request, "create", "")
        if call is None:
            assert refused is not None
            return refused
        user = str(((call.body.get("members") or [{}])[0]).get("id") or "")
        member = self.members.get(user)
        if member is None:
            return JSONResponse({"error": {"code": "NotFound"}}, status_code=404)
        return JSONResponse({"id": member.conversation_id}, status_code=201)

    async def _member(self, request: Request) -> Response:
        conversation = request.path_params["conversation"]
        call, refused = await self._record(request, "member", conversation)
        if call is None:
            assert refused is not None
            return refused
        user = request.path_params["user"]  # the Teams user id, or their Entra object id
        member = self.members.get(user) or next(
            (m for m in self.members.values() if m.aad_object_id == user), None)
        if member is None or member.conversation_id != conversation:
            return JSONResponse({"error": {"code": "MemberNotFoundInConversation"}},
                                status_code=404)
        return JSONResponse({"id": member.user_id, "aadObjectId": member.aad_object_id,
                             "email": member.email, "userPrincipalName": member.email,
                             "tenantId": member.tenant_id, "name": member.name,
                             "givenName": member.name, "surname": ""})
