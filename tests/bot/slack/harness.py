"""A running timebot with the Slack app on, pointed at a fake Slack Web API, and one
organisation for it (a workspace serves one organisation: the only one on this server).

    harness = await start_slack_harness("sqlite", tmp_path)
    member = await harness.slack_member("Ann", role="employee")   # a person + a Slack user
    await harness.slack.command("/timesheet", "remind", user=member.slack_id)
    await harness.stop()

With `socket_mode=True` the app runs in Socket Mode (SLACK_APP_TOKEN, no signing secret):
`harness.socket` is the fake Socket Mode server it connects to, and nothing is at /slack/events.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path

import httpx

from bot.slack.component import SlackBot, bot_of
from tests.bot.slack.fake_slack import FakeSlack
from tests.bot.slack.fake_socket_mode import FakeSocketMode
from tests.bot.slack.signing import SlackRequests
from tests.support import LiveServer, Member, Org, new_org, start_live_server, stop_live_server

SIGNING_SECRET = "test-signing-secret"
BOT_TOKEN = "xoxb-test-token"
APP_TOKEN = "xapp-test-token"


@dataclass
class SlackMember:
    member: Member
    slack_id: str

    @property
    def id(self) -> str:
        return self.member.id

    @property
    def name(self) -> str:
        return self.member.name


@dataclass
class SlackHarness:
    live: LiveServer
    fake: FakeSlack
    http: httpx.AsyncClient
    slack: SlackRequests
    org: Org
    socket: FakeSocketMode | None = None

    @property
    def bot(self) -> SlackBot:
        bot = bot_of(self.live.app.state.runtime)
        assert bot is not None
        return bot

    async def slack_member(self, name: str, role: str = "employee", *, tz: str = "UTC",
                           tz_offset: int = 0) -> SlackMember:
        member = await self.org.add_member(name, role)
        slack_id = "U" + uuid.uuid4().hex[:10].upper()
        self.fake.add_user(slack_id, member.email, name=name, tz=tz, tz_offset=tz_offset)
        return SlackMember(member, slack_id)

    async def stop(self) -> None:
        await stop_live_server(self.live)
        if self.socket is not None:
            await self.socket.stop()
        await self.fake.stop()
        await self.http.aclose()


async def start_slack_harness(
    backend: str, data_dir: Path, extra_env: dict[str, str] | None = None, *,
    socket_mode: bool = False,
) -> SlackHarness:
    fake = await FakeSlack.start()
    socket = await FakeSocketMode.start(fake) if socket_mode else None
    env = {"SLACK_BOT_TOKEN": BOT_TOKEN, "TIMEBOT_SLACK_API_URL": fake.api_url}
    env.update({"SLACK_APP_TOKEN": APP_TOKEN} if socket_mode else
               {"SLACK_SIGNING_SECRET": SIGNING_SECRET})
    live = await start_live_server(backend, data_dir, extra_env={**env, **(extra_env or {})})
    http = httpx.AsyncClient(timeout=30)
    org = await new_org(live, http, "Slack")
    runtime = live.app.state.runtime
    await runtime.subscriptions.ensure(org.id)
    slack = SlackRequests(http, f"{live.base_url}/slack/events", SIGNING_SECRET, fake)
    return SlackHarness(live, fake, http, slack, org, socket)
