"""`timebot serve --demo` (no Teams configured, one worker): the fake Teams of
shell/demo_teams.py beside the fake Slack, the demo organisation's tenant connected and its
people members of it. The fake's page (`GET /`) writes to the bot as one of them (a signed
activity to /teams/messages), sets their automatic replies (what Microsoft Graph tells of an
away approver) and shows what timebot sent to Teams. Loopback only."""

from __future__ import annotations

import asyncio
import dataclasses
import html
import secrets
import socket
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from shell.demo_teams import FakeMember, FakeTeams
from timebot.config import Settings


class DemoTeams:
    """The fake of `timebot serve --demo`, with its page: write to the bot as a person."""

    def __init__(self, fake: FakeTeams, people: list[FakeMember], timebot_url: str) -> None:
        self.fake, self.people, self.timebot_url = fake, people, timebot_url

    async def page(self, request: Request) -> Response:
        options = "".join(f'<option value="{html.escape(m.user_id)}">{html.escape(m.name)} '
                          f"({html.escape(m.email)})</option>" for m in self.people)
        sent = "".join(
            f"<li><code>{html.escape(call.kind)}</code> to "
            f"{html.escape(self._who(call.conversation_id))}: "
            f"<pre>{html.escape(str(call.body.get('text') or call.body)[:2000])}</pre></li>"
            for call in reversed(self.fake.calls[-50:]))
        return HTMLResponse(
            "<!doctype html><title>Fake Teams (demo)</title><h1>Fake Microsoft Teams</h1>"
            f'<form method="post" action="/say"><select name="user">{options}</select> '
            '<input name="text" size="50" value="2h @ help"> <button>Send to the bot</button>'
            f'</form><form method="post" action="/away"><select name="user">{options}</select> '
            '<button name="away" value="on">Out of office for a week</button> '
            '<button name="away" value="off">Back</button> (their automatic replies, as '
            "Microsoft Graph tells timebot when it sends them a review card)</form>"
            f"<h2>What timebot sent</h2><ul>{sent or '<li>nothing yet</li>'}</ul>")

    def _who(self, conversation_id: str) -> str:
        for member in self.people:
            if conversation_id in (member.conversation_id, member.aad_object_id):
                return member.name
        return conversation_id

    async def away(self, request: Request) -> Response:
        """The person's automatic replies: scheduled from now for a week, or off."""
        form = await request.form()
        member = self.fake.members.get(str(form.get("user") or ""))
        if member is not None and form.get("away") == "on":
            now = datetime.now(UTC).replace(microsecond=0, tzinfo=None)
            self.fake.out_of_office(member, "scheduled", now.isoformat(),
                                    (now + timedelta(days=7)).isoformat())
        elif member is not None:
            self.fake.out_of_office(member, "disabled")
        return RedirectResponse("/", status_code=303)

    async def say(self, request: Request) -> Response:
        form = await request.form()
        member = self.fake.members.get(str(form.get("user") or ""))
        if member is not None:
            import httpx

            activity = self.fake.message(member, str(form.get("text") or "")[:2000])
            async with httpx.AsyncClient(timeout=10) as client:
                await client.post(self.timebot_url + "/teams/messages", json=activity,
                                  headers={"authorization": f"Bearer {self.fake.sign(activity)}"})
        return RedirectResponse("/", status_code=303)

    def app(self) -> Any:
        """The fake Teams with the page's routes."""
        return self.fake.app([Route("/", self.page, methods=["GET"]),
                              Route("/say", self.say, methods=["POST"]),
                              Route("/away", self.away, methods=["POST"])])

    def start(self) -> str:
        """Serve on 127.0.0.1 in a daemon thread; its base URL."""
        import uvicorn

        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        self.fake.base_url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        server = uvicorn.Server(uvicorn.Config(
            self.app(), log_level="warning", access_log=False, log_config=None, lifespan="off",
            server_header=False))
        threading.Thread(target=server.run, kwargs={"sockets": [listener]},
                         name="demo-teams", daemon=True).start()
        for _ in range(200):
            if server.started:
                break
            time.sleep(0.02)
        return self.fake.base_url


def start_teams_for_demo(settings: Settings, workers: int, summary: dict[str, Any]
                         ) -> tuple[Settings, list[str]]:
    """The demo organisation's tenant on a fake Teams: the settings to serve with and the
    banner's lines (nothing when Teams is configured, or with several workers)."""
    if settings.teams_app_id or settings.teams_api_url or workers > 1:
        return settings, ["  Fake Microsoft Teams: shown with one worker and no Teams "
                          "configured"]
    fake = FakeTeams("demo-" + str(uuid.uuid4()), secrets.token_urlsafe(24),
                     consent_tenant=str(uuid.uuid4()))
    people = [fake.add_member(fake.consent_tenant, person["email"], person["name"])
              for person in summary["persons"]]
    demo = DemoTeams(fake, people, settings.public_url)
    demo.start()
    organisation = summary["organisation"]
    asyncio.run(_connect(settings, fake.consent_tenant, organisation["id"]))
    lines = [f"  Microsoft Teams: a fake tenant connected to {organisation['name']}, on "
             f"loopback only; write to the bot as one of its people: {fake.base_url}/"]
    return dataclasses.replace(settings, teams_app_id=fake.app_id,
                               teams_app_password=fake.password,
                               teams_api_url=fake.base_url), lines


async def _connect(settings: Settings, tenant_id: str, organisation_id: str) -> None:
    from bot.teams.tenants import TeamsTenants
    from plumbing.clock import SYSTEM_CLOCK
    from timebot.state.db import create_engine, migrate, session_factory

    engine = create_engine(settings.database_url)
    try:
        await migrate(engine)
        sessions = session_factory(engine)
        tenants = TeamsTenants(sessions, sessions, SYSTEM_CLOCK)
        existing = await tenants.tenant_of(organisation_id)
        if existing is not None:  # the demo started before: its fake tenant is a new one
            await tenants.remove_tenant(existing.tenant_id)
        await tenants.connect(tenant_id, organisation_id, "demo")
    finally:
        await engine.dispose()
