"""`timebot serve --demo`: a second organisation with its own Slack workspace (#27), on a fake
Slack Web API that this process starts on loopback only (127.0.0.1, a free port; a request
from any other address is refused too). The workspace is installed for the second
organisation the way an OAuth install stores it (bot.slack.oauth_store, token sealed), and timebot
talks to the fake as to Slack: review DMs, the Home, nudges. Its page (`GET /` of the fake)
lists the messages timebot sent there.

Only when Slack is not configured (no SLACK_BOT_TOKEN, SLACK_CLIENT_ID or
TIMEBOT_SLACK_API_URL) and with one worker: a real workspace is never mixed with the demo's.
"""

from __future__ import annotations

import dataclasses
import html
import json
import secrets
import socket
import threading
import time
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from plumbing.peers import is_loopback_address
from service.demo.second import SecondDemo
from timebot.config import Settings

TEAM_ID = "T0DEMOGLBX"
TEAM_NAME = "Globex (demo workspace)"
BOT_USER = "UDEMOBOT"


def wanted(settings: Settings) -> bool:
    return not (settings.slack_bot_token or settings.slack_client_id
                or settings.slack_api_url or settings.slack_app_token)


class DemoSlack:
    """The fake Web API of the demo's workspace: its people (by e-mail), the one bot token,
    and the messages timebot posted."""

    def __init__(self, demo: SecondDemo) -> None:
        self.token = "xoxb-demo-" + secrets.token_urlsafe(16)
        self.users = {f"UG{index:04d}": (name, email)
                      for index, (name, email, _role, _key) in enumerate(demo.people)}
        self.messages: list[dict[str, Any]] = []
        self.calls: dict[str, int] = {}
        self.url = ""

    def _user(self, user_id: str) -> dict[str, Any]:
        name, email = self.users[user_id]
        return {"id": user_id, "team_id": TEAM_ID, "name": name, "real_name": name,
                "tz": "Europe/Berlin", "tz_offset": 3600, "is_bot": False,
                "profile": {"email": email, "real_name": name}}

    def answer(self, method: str, args: dict[str, Any]) -> dict[str, Any]:
        if method == "auth.test":
            return {"ok": True, "team_id": TEAM_ID, "team": TEAM_NAME, "user": "timebot",
                    "user_id": BOT_USER, "bot_id": "BDEMO", "url": self.url + "/",
                    "is_enterprise_install": False}
        if method == "users.lookupByEmail":
            email = str(args.get("email") or "").lower()
            for user_id, (_name, address) in self.users.items():
                if address == email:
                    return {"ok": True, "user": self._user(user_id)}
            return {"ok": False, "error": "users_not_found"}
        if method == "users.info":
            user_id = str(args.get("user") or "")
            return ({"ok": True, "user": self._user(user_id)} if user_id in self.users
                    else {"ok": False, "error": "user_not_found"})
        if method == "users.list":
            return {"ok": True, "members": [self._user(u) for u in self.users],
                    "response_metadata": {"next_cursor": ""}}
        if method == "conversations.open":
            return {"ok": True, "channel": {"id": "D" + str(args.get("users") or "")[1:]}}
        if method in ("chat.postMessage", "chat.update", "chat.postEphemeral"):
            ts = str(args.get("ts") or f"{time.time():.6f}")
            self.messages.append({"method": method, "channel": args.get("channel"),
                                  "text": args.get("text"), "ts": ts})
            del self.messages[:-200]
            return {"ok": True, "channel": args.get("channel"), "ts": ts,
                    "message_ts": ts, "message": {"text": args.get("text"), "ts": ts}}
        if method.startswith("views."):
            return {"ok": True, "view": {"id": f"V{secrets.token_hex(4)}"}}
        return {"ok": True}

    async def api(self, request: Request) -> Response:
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        body = await request.body()
        args: dict[str, Any] = dict(request.query_params)  # the GET methods' arguments
        if request.headers.get("content-type", "").startswith("application/json"):
            loaded = json.loads(body or b"{}")
            args.update(loaded if isinstance(loaded, dict) else {})
        elif body:
            args.update((await request.form()).items())
        token = token or str(args.get("token") or "")
        method = request.path_params["method"]
        self.calls[method] = self.calls.get(method, 0) + 1
        if not secrets.compare_digest(token, self.token):
            return JSONResponse({"ok": False, "error": "invalid_auth"})
        return JSONResponse(self.answer(method, args))

    async def page(self, request: Request) -> Response:
        rows = "".join(
            f"<li><code>{html.escape(str(m['method']))}</code> to "
            f"{html.escape(str(m['channel']))}: {html.escape(str(m['text'] or ''))}</li>"
            for m in reversed(self.messages))
        return HTMLResponse(
            f"<!doctype html><title>{TEAM_NAME}</title><h1>{TEAM_NAME}</h1>"
            "<p>The demo's fake Slack workspace of the second organisation: what timebot "
            f"sent here, newest first.</p><ul>{rows or '<li>nothing yet</li>'}</ul>"
            f"<p>Web API calls: {html.escape(json.dumps(self.calls))}</p>")

    async def authorize(self, request: Request) -> Response:
        return HTMLResponse("<p>This is the demo's fake Slack: nothing can be installed "
                            "from here. Set SLACK_CLIENT_ID for a real workspace.</p>", 400)

    def app(self) -> Starlette:
        inner = Starlette(routes=[
            Route("/api/{method}", self.api, methods=["GET", "POST"]),
            Route("/oauth/v2/authorize", self.authorize, methods=["GET"]),
            Route("/", self.page, methods=["GET"]),
        ])

        async def loopback_only(scope: Any, receive: Any, send: Any) -> None:
            client = scope.get("client")
            if scope["type"] == "http" and not (client and is_loopback_address(client[0])):
                await Response("loopback only", 403)(scope, receive, send)
                return
            await inner(scope, receive, send)

        return loopback_only  # type: ignore[return-value]

    def start(self) -> str:
        """Serve on 127.0.0.1 in a daemon thread; its base URL."""
        import uvicorn

        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        server = uvicorn.Server(uvicorn.Config(
            self.app(), log_level="warning", access_log=False, log_config=None,
            lifespan="off", server_header=False))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]},
                                  name="demo-slack", daemon=True)
        thread.start()
        for _ in range(200):
            if server.started:
                break
            time.sleep(0.02)
        return self.url


async def install(settings: Settings, demo: SecondDemo, fake: DemoSlack) -> None:
    """The workspace installed for the second organisation, as an OAuth install stores it."""
    from slack_sdk.oauth.installation_store import Installation

    from bot.slack.oauth import BOT_SCOPES
    from bot.slack.oauth_store import InstallationStore, Issued
    from plumbing.clock import SYSTEM_CLOCK
    from timebot.crypto import SecretBox
    from timebot.state.db import create_engine, migrate, session_factory

    engine = create_engine(settings.database_url)
    try:
        await migrate(engine)
        store = InstallationStore(session_factory(engine), SYSTEM_CLOCK,
                                  SecretBox(settings.secret_key))
        await store.save_for(Installation(
            app_id="A0DEMO", enterprise_id=None, team_id=TEAM_ID, team_name=TEAM_NAME,
            bot_token=fake.token, bot_id="BDEMO", bot_user_id=BOT_USER,
            bot_scopes=list(BOT_SCOPES), user_id=next(iter(fake.users)),
        ), Issued(demo.organisation_id, demo.admin_id))
    finally:
        await engine.dispose()


def with_demo_slack(settings: Settings, fake: DemoSlack) -> Settings:
    """The settings that point the Slack app at the fake (OAuth installs, a fresh signing
    secret: nothing outside can send it requests that verify)."""
    return dataclasses.replace(
        settings, slack_api_url=fake.url + "/api/", slack_client_id="demo",
        slack_client_secret=secrets.token_urlsafe(24),
        slack_signing_secret=settings.slack_signing_secret or secrets.token_urlsafe(24))


def start_for_demo(settings: Settings, workers: int) -> tuple[Settings, list[str]]:
    """`timebot serve --demo`: the second organisation seeded, its fake workspace started and
    installed; the settings to serve with and the banner's lines."""
    import asyncio

    from plumbing.clock import SYSTEM_CLOCK
    from plumbing.db import unit_of_work
    from service.demo.second import seed_second_demo
    from shell.embedded_db import embedded_sessions

    if not wanted(settings) or workers > 1:
        return settings, ["  Second organisation with its own fake Slack workspace: shown with "
                          "one worker and no Slack configured"]

    async def seed() -> SecondDemo:
        async with embedded_sessions(settings) as sessions, unit_of_work(sessions) as session:
            return await seed_second_demo(session, SYSTEM_CLOCK.now_ms())

    second = asyncio.run(seed())
    fake = DemoSlack(second)
    fake.start()
    asyncio.run(install(settings, second, fake))
    lines = [f"  Second organisation: {second.name}, with its own Slack workspace "
             f"\"{TEAM_NAME}\"",
             f"    a fake Slack on loopback only; what timebot sends there: {fake.url}/"]
    lines += [f"    {email} ({role}): apikey {key}" for _name, email, role, key in second.people]
    return with_demo_slack(settings, fake), lines
