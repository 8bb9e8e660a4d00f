"""Installs the Slack app into the one HTTP app when SLACK_BOT_TOKEN is set: POST /slack/events
(requests verified with SLACK_SIGNING_SECRET, five-minute timestamp window, by slack-bolt), or
Socket Mode when SLACK_APP_TOKEN is set; plus the sender worker, the nudge loop, the bot's
channel of the ground's review dispatch (approval DMs) and the bus subscribers (approval
outcomes, Journal threads, owner notices).

The bot's composition root: the only module importing every part. Each part installs its
listeners on the bolt app and its sub-commands in the registry through `register`; a part
that calls another gets the call handed to it (approvals: the Home tab's `publish`)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import structlog
from slack_bolt.async_app import AsyncApp
from starlette.routing import BaseRoute, Route

from bot import (
    approvals,
    approve_all,
    home,
    installation,
    linking,
    nudge_preferences,
    owner_notices,
    review_dms,
    slash_commands,
    submit_now,
    team_reminders,
    threads,
    time_commands,
)
from bot.app import close_keep_alive, keep_alive, slack_app, web_client
from bot.commands import CommandRegistry
from bot.deps import SlackDeps
from bot.http_events import events_endpoint
from bot.identity import Identity
from bot.nudges import NudgesPart
from bot.sender import SlackSender
from bot.socket_mode import SocketMode
from bot.workspace import Workspace
from timebot.errors import ConfigError
from timebot.notify.review_dispatch import ReviewDispatch
from timebot.runtime import Runtime

log = structlog.get_logger("timebot.slack")

WORK_SLOTS = 4


@dataclass(frozen=True)
class SlackBot:
    """A running Slack app: the bolt app, what its parts use, and the nudge loop (started
    and stopped by the runtime's singletons)."""

    app: AsyncApp
    deps: SlackDeps
    nudges: NudgesPart


_BOTS: dict[int, SlackBot] = {}


def bot_of(runtime: Runtime) -> SlackBot | None:
    """The Slack app of a running timebot (None when Slack is not configured)."""
    return _BOTS.get(id(runtime))


def build_bot(
    runtime: Runtime, token: str, signing_secret: str | None, reviews: ReviewDispatch, *,
    api_url: str | None = None, organisation_id: str | None = None, socket_mode: bool = False,
) -> SlackBot:
    """The bolt app with every part's listeners installed, and the review DMs registered as a
    channel of the ground's review dispatch."""
    workspace = Workspace(runtime.state_sessions, runtime.clock, runtime.directory, token,
                          organisation_id)
    client = web_client(token, api_url, workspace)
    app = slack_app(runtime, client, signing_secret, socket_mode=socket_mode,
                    workspace=workspace)
    deps = SlackDeps(
        runtime=runtime, web=client,
        identity=Identity(client, runtime.directory, workspace),
        sender=SlackSender(runtime.state_sessions, client, runtime.clock,
                           may_send=workspace.active),
        registry=CommandRegistry(), workspace=workspace,
        work_slots=asyncio.Semaphore(WORK_SLOTS),
    )
    installation.register(app, workspace)
    slash_commands.register(app, deps)
    linking.register(app, deps)
    home_part = home.register(app, deps)
    approvals_part = approvals.register(app, deps, refresh_home=home_part.publish)
    approve_all.register(app, deps, approvals_part)
    review_dms.register(deps, reviews)
    threads.register(app, deps)
    nudge_preferences.register(app, deps)
    submit_now.register(app, deps)
    team_reminders.register(deps)
    time_commands.register(app, deps)
    owner_notices.register(deps)
    return SlackBot(app, deps, NudgesPart(deps))


def install_slack(runtime: Runtime, routes: list[BaseRoute], reviews: ReviewDispatch) -> None:
    settings = runtime.settings
    if not settings.slack_bot_token:
        return
    socket_mode = bool(settings.slack_app_token)
    if not socket_mode and not settings.slack_signing_secret:
        raise ConfigError("SLACK_SIGNING_SECRET is required with SLACK_BOT_TOKEN (HTTP mode)")
    bot = build_bot(
        runtime, settings.slack_bot_token, settings.slack_signing_secret, reviews,
        api_url=settings.slack_api_url, organisation_id=settings.slack_organisation,
        socket_mode=socket_mode,
    )
    _BOTS[id(runtime)] = bot
    client, sender, workspace = bot.deps.web, bot.deps.sender, bot.deps.workspace
    probes: list[asyncio.Task[bool | None]] = []

    async def start(_runtime: Runtime) -> None:
        keep_alive(client)
        sender.worker.start()
        # Learn the team (and notice a token installed again) without delaying the start.
        probes.append(asyncio.create_task(workspace.probe(), name="slack-probe"))

    async def stop(_runtime: Runtime) -> None:
        for probe in probes:
            probe.cancel()
        await asyncio.gather(*probes, return_exceptions=True)
        await sender.worker.stop()
        await close_keep_alive(client)
        _BOTS.pop(id(runtime), None)

    runtime.on_start.append(start)
    runtime.on_stop.append(stop)
    # The nudge loop runs in one process at a time (timebot/state/singleton.py).
    runtime.singletons.add("slack-nudges", bot.nudges.start, bot.nudges.stop)
    runtime.singletons.add("slack-workspace", workspace.start, workspace.stop)
    if settings.slack_app_token:
        # Connects after `start` and (stop hooks run in reverse) disconnects before `stop`.
        socket = SocketMode(bot.app, settings.slack_app_token)
        runtime.on_start.append(socket.start)
        runtime.on_stop.append(socket.stop)
    else:
        # Malformed bodies answered 400 before bolt parses them (bot/http_events.py).
        assert settings.slack_signing_secret is not None  # checked above
        routes.append(Route("/slack/events", events_endpoint(
            bot.app, settings.slack_signing_secret), methods=["POST"]))
    log.info("slack_installed", mode="socket" if socket_mode else "http")
