"""A running timebot with the Teams front on, pointed at the fake Teams of shell/demo_teams.py
(token issuer + Bot Connector + Microsoft Graph's automatic replies and presence, served on
loopback here), and one organisation whose tenant is connected through the admin-consent flow
as an administrator's browser does it.

    world = await start_teams_world("sqlite", tmp_path)
    member = await world.member("Ann")                  # a person + a Teams user of the tenant
    response = await world.send(world.fake.message(member.teams, "3h @acme"))
    await world.fake.wait_for("send", conversation_id=member.teams.conversation_id)
    world.fake.out_of_office(member.teams, "alwaysEnabled")  # what Graph then answers
"""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from shell.demo_teams import FakeMember, FakeTeams
from tests.net import free_port, started
from tests.support import LiveServer, Member, Org, new_org, start_live_server, stop_live_server
from tests.timebot.signin_support import browser, sign_in
from timebot.process.runtime import Runtime

APP_ID = "00000000-0000-4000-8000-00000000a99d"
PASSWORD = "fake-teams-app-password"


@dataclass
class TeamsMember:
    member: Member
    teams: FakeMember


async def serve_fake(fake: FakeTeams) -> tuple[uvicorn.Server, asyncio.Task[None]]:
    port = free_port()
    fake.base_url = f"http://127.0.0.1:{port}"
    config = uvicorn.Config(fake.app(), host="127.0.0.1", port=port, log_level="warning",
                            access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    return server, await started(server, "the fake Teams")


@dataclass
class TeamsWorld:
    live: LiveServer
    fake: FakeTeams
    http: httpx.AsyncClient
    org: Org
    tenant_id: str
    fake_server: uvicorn.Server
    fake_task: asyncio.Task[None]

    @property
    def url(self) -> str:
        return f"{self.live.base_url}/teams/messages"

    @property
    def runtime(self) -> Runtime:
        return self.live.app.state.runtime  # type: ignore[no-any-return]

    async def member(self, name: str, role: str = "employee", *,
                     tenant_id: str | None = None) -> TeamsMember:
        person = await self.org.add_member(name, role)
        return TeamsMember(person, self.fake.add_member(tenant_id or self.tenant_id,
                                                        person.email, name))

    async def send(self, activity: dict[str, Any], token: str | None = None, *,
                   body: bytes | None = None) -> httpx.Response:
        """POST the activity as the Bot Framework does: signed (or with `token`)."""
        signed = self.fake.sign(activity) if token is None else token
        headers = {"content-type": "application/json"}
        if signed:
            headers["authorization"] = f"Bearer {signed}"
        return await self.http.post(self.url, content=body if body is not None
                                    else json.dumps(activity).encode(), headers=headers)

    async def connect(self, org: Org, tenant_id: str) -> httpx.Response:
        """The admin-consent flow of `org`'s administrator, from /teams/connect to the
        callback; the callback's answer."""
        self.fake.consent_tenant = tenant_id
        async with browser(self.live) as admin:
            await sign_in(self.live, admin, org.admin.email)
            started = await admin.get(f"/teams/connect?organisation={org.id}")
            assert started.status_code == 303, started.text
            consented = await self.http.get(started.headers["location"])
            assert consented.status_code == 302, consented.text
            back = consented.headers["location"]
            assert back.startswith(self.live.settings.public_url + "/teams/consent?")
            return await admin.get(back.removeprefix(self.live.settings.public_url))

    async def stop(self) -> None:
        await stop_live_server(self.live)
        self.fake_server.should_exit = True
        await self.fake_task
        await self.http.aclose()


async def start_teams_world(backend: str, data_dir: Path,
                            extra_env: dict[str, str] | None = None,
                            fake: FakeTeams | None = None, subscribed: bool = False
                            ) -> TeamsWorld:
    """`subscribed`: the organisation's webhook made first, as a running server's loop does."""
    fake = fake or FakeTeams(APP_ID, PASSWORD)
    server, task = await serve_fake(fake)
    env = {"TEAMS_APP_ID": APP_ID, "TEAMS_APP_PASSWORD": PASSWORD,
           "TIMEBOT_TEAMS_API_URL": fake.base_url}
    live = await start_live_server(backend, data_dir, extra_env={**env, **(extra_env or {})})
    http = httpx.AsyncClient(timeout=30)
    org = await new_org(live, http, "Teams")
    world = TeamsWorld(live, fake, http, org, str(uuid.uuid4()), server, task)
    answer = await world.connect(org, world.tenant_id)
    assert answer.status_code == 303 and answer.headers["location"] == "/account?done=teams", \
        answer.text
    if subscribed:
        await world.runtime.subscriptions.ensure(org.id)
    return world
