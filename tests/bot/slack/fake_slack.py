"""A fake Slack Web API on loopback: a real HTTP server (uvicorn) that answers the methods the
bot calls, records every call, and can be told to answer 429 with Retry-After.

    fake = await FakeSlack.start()
    fake.add_user("U1", "ann@example.com", tz="Europe/Paris", tz_offset=3600)
    env = {"TIMEBOT_SLACK_API_URL": fake.api_url, "SLACK_BOT_TOKEN": "xoxb-test", ...}
    ...
    calls = await fake.wait_for("chat.postMessage", count=1)
    fake.calls_to("chat.update")              # [Call(method, args, at)]
    fake.rate_limit("chat.postMessage", times=2, retry_after=1)   # channel="U1": only there
    await fake.wait_for("chat.postMessage", refused=True)   # a call that was answered 429
    fake.enforce_channel_rate(1.0)            # 429 when a channel gets two posts within 1 s
    fake.uninstall()                          # the app removed: every call answers
    fake.install()                            #   token_revoked (still recorded) until this
    hold = fake.hold("chat.postMessage", channel="U1")   # U1's next post waits …
    await hold.arrived.wait(); hold.release()             # … until the test lets it through
    fake.fail("chat.postMessage", channel="U2", error="channel_not_found")  # or status=503,
                            # body="<html>" (not JSON), status=0 (the connection drops), times=N
    fake.clock = virtual.now                  # the times calls are recorded (and paced) at
    await fake.stop()

`auth.test` answers the team `TEAM_ID`, or the team of a token given out through OAuth
(`add_team`, `approve`, `token_of`, `revoke`: tests/bot/slack/fake_workspaces.py); `call.token` is
the token a call was made with. `response_url`s for slash commands and actions point at
`fake.response_url(...)`; what the bot posts there is recorded as method "response_url".
`apps.connections.open` (app-level tokens only) answers `fake.socket_url`, which
tests/bot/slack/fake_socket_mode.py sets.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.bot.slack.fake_workspaces import FakeWorkspaces
from tests.net import free_port, started

TEAM_ID = "T0TIMEBOT"
BOT_USER_ID = "UBOT"


@dataclass
class Call:
    method: str
    args: dict[str, Any]
    at: float
    token: str = ""


@dataclass
class Hold:
    """Calls of `method` (into `channel`, if given) wait at the fake until `release()`; the
    first `times` of them (they are recorded when they go on)."""

    method: str
    channel: str | None
    times: int
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    _released: asyncio.Event = field(default_factory=asyncio.Event)

    def release(self) -> None:
        self._released.set()


@dataclass
class Failure:
    """The next `times` calls of `method` (into `channel`, if given, whose args include
    `match`) answered `status` with Slack's `{"ok": false, "error": error}`, or with `body`
    as it is (e.g. not JSON)."""

    method: str
    channel: str | None
    status: int
    error: str | None
    body: str | None
    times: int
    match: dict[str, Any] = field(default_factory=dict)


@dataclass
class FakeUser:
    id: str
    email: str | None
    name: str
    tz: str
    tz_offset: int
    is_bot: bool = False
    team: str | None = None  # a workspace of `add_team` (None: TEAM_ID's, seen by any token)


@dataclass
class FakeSlack(FakeWorkspaces):
    port: int
    server: uvicorn.Server | None = None
    task: asyncio.Task[None] | None = None
    calls: list[Call] = field(default_factory=list)
    users: dict[str, FakeUser] = field(default_factory=dict)
    # method -> (remaining 429 answers, retry-after seconds, only this channel or None)
    _limited: dict[str, list[Any]] = field(default_factory=dict)
    _channel_interval: float | None = None
    _channel_last: dict[str, float] = field(default_factory=dict)
    rate_limited: list[Call] = field(default_factory=list)
    _ts: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    messages: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    by_channel: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    # Socket Mode: what apps.connections.open answers (tests/bot/slack/fake_socket_mode.py sets it).
    socket_url: str | None = None
    # Uninstalled: the bot token is revoked, every Web API call is refused (and recorded).
    uninstalled: bool = False
    # When a call arrived (Call.at, the channel rate): a test may hand its own clock.
    clock: Callable[[], float] = time.monotonic
    holds: list[Hold] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    failed: list[Call] = field(default_factory=list)
    # Workspaces installed through OAuth: team id -> name; token -> team; code -> team.
    teams: dict[str, str] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)
    codes: dict[str, str] = field(default_factory=dict)
    revoked: set[str] = field(default_factory=set)
    approving: list[str] = field(default_factory=list)
    rotation: dict[str, tuple[int, int]] = field(default_factory=dict)
    enterprise_of: dict[str, str] = field(default_factory=dict)
    refresh_tokens: dict[str, str] = field(default_factory=dict)

    @classmethod
    async def start(cls, port: int | None = None) -> FakeSlack:
        fake = cls(port or free_port())
        app = Starlette(routes=[
            Route("/api/{method}", fake._api, methods=["GET", "POST"]),
            Route("/response/{key}", fake._response, methods=["POST"]),
            Route("/count/{method}", fake._count, methods=["GET"]),
            Route("/last/{method}", fake._last, methods=["GET"]),
            Route("/calls/{method}", fake._calls, methods=["GET"]),
            Route("/oauth/v2/authorize", fake._authorize, methods=["GET"]),
        ])
        config = uvicorn.Config(app, host="127.0.0.1", port=fake.port, log_level="warning",
                                access_log=False, lifespan="off")
        fake.server = uvicorn.Server(config)
        fake.task = await started(fake.server, "the fake Slack")
        return fake

    async def stop(self) -> None:
        if self.server is not None and self.task is not None:
            self.server.should_exit = True
            await self.task

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def api_url(self) -> str:
        """What TIMEBOT_SLACK_API_URL is set to."""
        return f"{self.base_url}/api/"

    def response_url(self, key: str = "r") -> str:
        return f"{self.base_url}/response/{key}"

    def add_user(
        self, user_id: str, email: str | None, *, name: str = "", tz: str = "UTC",
        tz_offset: int = 0, is_bot: bool = False, team: str | None = None,
    ) -> FakeUser:
        user = FakeUser(user_id, email, name or user_id, tz, tz_offset, is_bot, team)
        self.users[user_id] = user
        return user

    def rate_limit(self, method: str, times: int = 1, retry_after: int = 1,
                   channel: str | None = None) -> None:
        """The next `times` calls of `method` (into `channel` only, if given) get HTTP 429
        with Retry-After."""
        self._limited[method] = [times, retry_after, channel]

    def hold(self, method: str, channel: str | None = None, times: int = 1) -> Hold:
        held = Hold(method, channel, times)
        self.holds.append(held)
        return held

    def fail(self, method: str, *, channel: str | None = None, status: int = 200,
             error: str | None = None, body: str | None = None, times: int = 1,
             **match: Any) -> None:
        self.failures.append(Failure(method, channel, status, error, body, times, match))

    def enforce_channel_rate(self, interval: float | None) -> None:
        """Answer 429 (Retry-After 1) to a post into a channel that had one < interval ago."""
        self._channel_interval = interval

    def uninstall(self) -> None:
        self.uninstalled = True

    def install(self) -> None:
        self.uninstalled = False

    def reset(self) -> None:
        self.calls.clear()
        self.rate_limited.clear()
        self._limited.clear()
        for held in self.holds:
            held.release()
        self.holds.clear()
        self.failures.clear()
        self.failed.clear()
        self.approving.clear()
        self.clock = time.monotonic

    def calls_to(self, method: str) -> list[Call]:
        return [call for call in self.calls if call.method == method]

    async def wait_for(self, method: str, count: int = 1, seconds: float = 20.0, *,
                       refused: bool = False, failed: bool = False, **match: Any
                       ) -> list[Call]:
        """Wait until `count` calls of `method` (whose args include `match`) were made; with
        `refused`, calls that were answered 429; with `failed`, those answered by `fail`."""
        def found() -> list[Call]:
            calls = self.rate_limited if refused else self.failed if failed else self.calls
            return [c for c in calls if c.method == method
                    and all(c.args.get(k) == v for k, v in match.items())]

        deadline = time.monotonic() + seconds
        async with self._changed:
            while len(found()) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(
                        f"expected {count} {method} {match or ''}, got {len(found())}: "
                        f"{[c.method for c in self.calls]}"
                    )
                try:
                    await asyncio.wait_for(self._changed.wait(), timeout=left)
                except TimeoutError:
                    pass
        return found()

    # --- the server -----------------------------------------------------------------------

    async def _args(self, request: Request) -> dict[str, Any]:
        args: dict[str, Any] = dict(request.query_params)
        body = await request.body()
        if body:
            kind = request.headers.get("content-type", "")
            if kind.startswith("application/json"):
                args.update(json.loads(body))
            else:
                for key, value in parse_qsl(body.decode()):
                    args[key] = value
        for key in ("blocks", "view", "attachments"):
            if isinstance(args.get(key), str):
                try:
                    args[key] = json.loads(args[key])
                except ValueError:
                    pass
        return args

    def _new_call(self, method: str, args: dict[str, Any]) -> Call:
        return Call(method, args, self.clock())

    async def _record(self, call: Call) -> None:
        self.calls.append(call)
        async with self._changed:
            self._changed.notify_all()

    async def _refuse(self, call: Call, retry_after: int) -> Response:
        self.rate_limited.append(call)
        async with self._changed:
            self._changed.notify_all()
        return JSONResponse({"ok": False, "error": "ratelimited"}, status_code=429,
                            headers={"Retry-After": str(retry_after)})

    def _im(self, channel: str) -> str:
        return "D" + channel[1:] if channel.startswith(("U", "W")) else channel

    async def _api(self, request: Request) -> Response:
        method = request.path_params["method"]
        args = await self._args(request)
        for held in self.holds:
            if held.times > 0 and held.method == method and held.channel in (
                    None, args.get("channel")):
                held.times -= 1
                held.arrived.set()
                await held._released.wait()
                break
        for failure in self.failures:
            if failure.times > 0 and failure.method == method and failure.channel in (
                    None, args.get("channel")) and all(
                    args.get(k) == v for k, v in failure.match.items()):
                failure.times -= 1
                self.failed.append(Call(method, args, self.clock()))
                async with self._changed:
                    self._changed.notify_all()
                if failure.status == 0:  # the connection drops in the middle of the answer
                    return Response(b'{"ok": tr', headers={"content-length": "100"},
                                    media_type="application/json")
                if failure.body is not None:
                    return Response(failure.body, status_code=failure.status,
                                    media_type="text/html")
                return JSONResponse({"ok": False, "error": failure.error},
                                    status_code=failure.status)
        call = Call(method, args, self.clock())
        limited = self._limited.get(method)
        if limited and limited[0] > 0 and limited[2] in (None, args.get("channel")):
            limited[0] -= 1
            return await self._refuse(call, int(limited[1]))
        if self._channel_interval is not None and method == "chat.postMessage":
            channel = self._im(str(args.get("channel", "")))
            last = self._channel_last.get(channel)
            # 5 % tolerance for clock granularity
            if last is not None and call.at - last < self._channel_interval * 0.95:
                return await self._refuse(call, 1)
            self._channel_last[channel] = call.at
        if method == "apps.connections.open":
            # Slack answers it only to an app-level token, never to the bot token.
            token = request.headers.get("authorization", "").removeprefix("Bearer ")
            call.args["token"] = token
            await self._record(call)
            if not token.startswith("xapp-"):
                return JSONResponse({"ok": False, "error": "not_allowed_token_type"})
            if self.socket_url is None:
                return JSONResponse({"ok": False, "error": "invalid_auth"})
            return JSONResponse({"ok": True, "url": self.socket_url})
        call.token = (request.headers.get("authorization", "").removeprefix("Bearer ")
                      or str(args.get("token") or ""))
        await self._record(call)
        team = self.tokens.get(call.token)
        if self.uninstalled or (team is not None and team in self.revoked):
            return JSONResponse({"ok": False, "error": "token_revoked"})
        if method == "oauth.v2.access" or (method == "auth.test" and team is not None):
            return JSONResponse(self._workspace_answer(method, args, request, team))
        return JSONResponse(self._answer(method, args, team))

    def _answer(self, method: str, args: dict[str, Any], team: str | None = None
                ) -> dict[str, Any]:
        if method == "auth.test":
            return {"ok": True, "url": "https://timebot-test.slack.com/", "team": "Test",
                    "user": "timebot", "team_id": TEAM_ID, "user_id": BOT_USER_ID,
                    "bot_id": "BBOT", "is_enterprise_install": False}
        if method == "users.info":
            user = self.users.get(str(args.get("user")))
            if user is None or not self._sees(user, team):
                return {"ok": False, "error": "user_not_found"}
            return {"ok": True, "user": self._user(user)}
        if method == "users.lookupByEmail":
            email = str(args.get("email", "")).lower()
            for user in self.users.values():
                if (user.email or "").lower() == email and self._sees(user, team):
                    return {"ok": True, "user": self._user(user)}
            return {"ok": False, "error": "users_not_found"}
        if method == "users.list":
            members = [u for u in self.users.values() if self._sees(u, team)]
            start = int(args.get("cursor") or 0)
            limit = int(args.get("limit") or 200)
            page = members[start:start + limit]
            following = str(start + limit) if start + limit < len(members) else ""
            return {"ok": True, "members": [self._user(u) for u in page],
                    "response_metadata": {"next_cursor": following}}
        if method == "conversations.open":
            return {"ok": True, "channel": {"id": self._im(str(args.get("users", "")))}}
        if method == "chat.postMessage":
            channel = self._im(str(args.get("channel", "")))
            ts = f"{1_700_000_000 + next(self._ts)}.000100"
            self.messages[(channel, ts)] = dict(args)
            self.by_channel[channel].append(ts)
            return {"ok": True, "channel": channel, "ts": ts, "message": {"text": args.get(
                "text"), "ts": ts}}
        if method == "chat.update":
            key = (str(args.get("channel")), str(args.get("ts")))
            if key not in self.messages:
                return {"ok": False, "error": "message_not_found"}
            self.messages[key] = {**self.messages[key], **args}
            return {"ok": True, "channel": key[0], "ts": key[1]}
        if method == "chat.delete":
            key = (str(args.get("channel")), str(args.get("ts")))
            if self.messages.pop(key, None) is None:
                return {"ok": False, "error": "message_not_found"}
            return {"ok": True, "channel": key[0], "ts": key[1]}
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": f"{1_700_000_000 + next(self._ts)}.000200"}
        if method in ("views.open", "views.publish", "views.update", "views.push"):
            return {"ok": True, "view": {"id": f"V{next(self._ts)}", **dict(
                args.get("view") or {})}}
        return {"ok": True}

    def _user(self, user: FakeUser) -> dict[str, Any]:
        return {"id": user.id, "team_id": user.team or TEAM_ID, "name": user.name,
                "real_name": user.name, "tz": user.tz, "tz_offset": user.tz_offset,
                "is_bot": user.is_bot,
                "profile": {"email": user.email, "real_name": user.name}}

    async def _count(self, request: Request) -> Response:
        """How many calls of a method were recorded (for a fake run in another process)."""
        return JSONResponse({"count": len(self.calls_to(request.path_params["method"]))})

    async def _last(self, request: Request) -> Response:
        """The arguments of the last call of a method (for a fake run in another process)."""
        calls = self.calls_to(request.path_params["method"])
        return JSONResponse(calls[-1].args if calls else None)

    async def _calls(self, request: Request) -> Response:
        """Each call of a method: its token, channel and time.monotonic() (for a fake run in
        another process of the machine)."""
        return JSONResponse([{"token": c.token, "channel": c.args.get("channel"), "at": c.at}
                             for c in self.calls_to(request.path_params["method"])])

    async def _response(self, request: Request) -> Response:
        args = await self._args(request)
        args["response_key"] = request.path_params["key"]
        await self._record(Call("response_url", args, time.monotonic()))
        return Response("ok")


async def serve_forever(port: int, users: list[tuple[str, str]]) -> None:
    """`python -m tests.bot.slack.fake_slack PORT USER_ID=EMAIL…`: the fake in its own process."""
    fake = await FakeSlack.start(port)
    for user_id, email in users:
        fake.add_user(user_id, email)
    assert fake.task is not None
    await fake.task


if __name__ == "__main__":
    import sys

    pairs = [argument.split("=", 1) for argument in sys.argv[2:]]
    asyncio.run(serve_forever(int(sys.argv[1]), [(pair[0], pair[1]) for pair in pairs]))
