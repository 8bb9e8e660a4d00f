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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import structlog
from slack_bolt.async_app import AsyncApp
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from starlette.routing import BaseRoute, Route

from bot.slack import (
    approvals,
    approve_all,
    away_status,
    climb_dm,
    home,
    installation,
    linking,
    nudge_preferences,
    owner_notices,
    report_dms,
    review_dms,
    slash_commands,
    submit_now,
    team_reminders,
    threads,
    time_commands,
)
from bot.slack.app import close_keep_alive, keep_alive, slack_app, web_client
from bot.slack.commands import CommandRegistry
from bot.slack.dedup import SlackDeduplication
from bot.slack.deps import SlackDeps
from bot.slack.http_events import events_endpoint
from bot.slack.identity import Identity
from bot.slack.installations import InstallationAuthorize, Installations
from bot.slack.nudges import NudgesPart
from bot.slack.oauth import oauth_flow, oauth_routes
from bot.slack.oauth_store import InstallationStore, InstalledBot, StateStore
from bot.slack.pacing import RateLimits
from bot.slack.routes import DirectHub, Hub, OrganisationRoutes
from bot.slack.sender import SlackSender
from bot.slack.sender_worker import due_teams
from bot.slack.socket_mode import SocketMode
from bot.slack.workspace import Workspace
from timebot.connect_pages import WhoIs
from timebot.errors import ConfigError
from timebot.notify.review_dispatch import ReviewDispatch
from timebot.process.notifications import INSTALLED
from timebot.process.runtime import Runtime
from timebot.state.slack_workspaces import records_by_token

log = structlog.get_logger("timebot.slack")

WORK_SLOTS = 4  # the work after the acks, the process's installations together
TICK_SLOTS = 2  # nudge ticks at once, the process's installations together
# An installation's sender polls this seldom (a claim is a write transaction: 100 senders
# polling every 30 s queued theirs for SQLite's write lock ahead of the acks, #27); one query
# a second for all of them wakes those with rows due, rows of another process and leases run
# out included (bot.slack.installations.Installations.wake_due).
INSTALLATION_POLL_SECONDS = 300.0


@dataclass(frozen=True)
class SlackBot:
    """A running Slack app: the bolt app, what its parts use, and the nudge loop (started
    and stopped by the runtime's singletons)."""

    app: AsyncApp
    deps: SlackDeps
    nudges: NudgesPart


_BOTS: dict[int, SlackBot] = {}
_REGISTRIES: dict[int, Installations] = {}


def installations_of(runtime: Runtime) -> Installations | None:
    """Every installation's bot of a running timebot (None when Slack is not configured)."""
    return _REGISTRIES.get(id(runtime))


def bot_of(runtime: Runtime) -> SlackBot | None:
    """The Slack app of a running timebot (None when Slack is not configured)."""
    return _BOTS.get(id(runtime))


@dataclass(frozen=True)
class Shared:
    """What every bot of the process shares (#27: 100 installations on one process): the
    slots bounding the work after the acks, the deduplication of Slack's retries, where the
    installations' parts register (routed by organisation: bot.slack.routes), the slots of the
    nudge ticks, and the pace each workspace's sender keeps (this process's share of Slack's,
    `RateLimits.shared_by`)."""

    work_slots: asyncio.Semaphore
    dedup: SlackDeduplication
    routes: OrganisationRoutes | None
    direct: DirectHub
    ticks: asyncio.Semaphore
    limits: RateLimits

    @classmethod
    def of(cls, runtime: Runtime, reviews: ReviewDispatch, *, routed: bool) -> Shared:
        jobs = INSTALLED.get(id(runtime))
        scheduler = jobs.scheduler if jobs is not None else None
        return cls(asyncio.Semaphore(WORK_SLOTS),
                   SlackDeduplication(runtime.state_sessions, runtime.clock,
                                      runtime.read_sessions),
                   OrganisationRoutes(runtime.bus, reviews, scheduler) if routed else None,
                   DirectHub(runtime.bus, reviews, scheduler), asyncio.Semaphore(TICK_SLOTS),
                   RateLimits().shared_by(runtime.settings.workers))


def build_bot(
    runtime: Runtime, token: str, signing_secret: str | None, shared: Shared, *,
    api_url: str | None = None, organisation_id: str | None = None, socket_mode: bool = False,
    installed: InstalledBot | None = None, oauth_settings: AsyncOAuthSettings | None = None,
    fresh: Callable[[], Awaitable[None]] | None = None,
    gone: Callable[[], Awaitable[None]] | None = None,
) -> SlackBot:
    """The bolt app with every part's listeners installed, and the review DMs registered as a
    channel of the ground's review dispatch. `installed`: an OAuth installation's bot (its
    team, its organisation; its parts registered through `shared.routes`); else
    SLACK_BOT_TOKEN's. With `oauth_settings` (SLACK_CLIENT_ID set) each app is authorized
    with its own installation's token (bot.slack.installations)."""
    hub: Hub = shared.direct
    if installed is not None:
        token, organisation_id = installed.token, installed.organisation_id
        assert shared.routes is not None
        hub = shared.routes.hub(installed.organisation_id)
    workspace = Workspace(runtime.state_sessions, runtime.clock, runtime.directory, token,
                          organisation_id,
                          team_id=installed.team_id if installed is not None else None,
                          enterprise_id=installed.enterprise_id if installed is not None
                          else None, reads=runtime.read_sessions)
    client = web_client(token, api_url, workspace)
    authorize = None
    if oauth_settings is not None:
        authorize = (InstallationAuthorize(client, installed.team_id, installed.enterprise_id,
                                           installed.bot_id, installed.bot_user_id, fresh)
                     if installed is not None else InstallationAuthorize(client))

    async def may_send() -> bool:  # token rotation first: the worker sends with a fresh token
        if fresh is not None:
            await fresh()
        return await workspace.active()

    app = slack_app(runtime, client, signing_secret, socket_mode=socket_mode,
                    workspace=workspace, authorize=authorize, oauth_settings=oauth_settings,
                    dedup=shared.dedup)
    deps = SlackDeps(
        runtime=runtime, web=client,
        identity=Identity(client, runtime.directory, workspace),
        sender=SlackSender(runtime.state_sessions, client, runtime.clock,
                           limits=shared.limits,
                           may_send=may_send,
                           team_id=installed.team_id if installed is not None else None,
                           poll_seconds=INSTALLATION_POLL_SECONDS if installed is not None
                           else 1.0, reads=runtime.read_sessions),
        registry=CommandRegistry(), workspace=workspace,
        work_slots=shared.work_slots, hub=hub,
    )
    installation.register(app, workspace, gone)
    slash_commands.register(app, deps)
    linking.register(app, deps)
    home_part = home.register(app, deps)
    approvals_part = approvals.register(app, deps, refresh_home=home_part.publish)
    approve_all.register(app, deps, approvals_part)
    review_dms.register(deps)
    climb_dm.register(deps)  # issue 28's climbing reminders
    threads.register(app, deps)
    nudge_preferences.register(app, deps)
    submit_now.register(app, deps)
    team_reminders.register(deps)
    time_commands.register(app, deps)
    owner_notices.register(deps)
    report_dms.register(deps)
    away_status.register(app, deps)
    return SlackBot(app, deps, NudgesPart(deps, ticks=shared.ticks))


def install_slack(runtime: Runtime, routes: list[BaseRoute], reviews: ReviewDispatch,
                  who_is: WhoIs | None = None) -> None:
    """SLACK_BOT_TOKEN's workspace, and with SLACK_CLIENT_ID / SLACK_CLIENT_SECRET the OAuth
    installs (bot.slack.oauth: `who_is` tells who a browser's session is) and every workspace
    installed that way (bot.slack.installations)."""
    settings = runtime.settings
    if not settings.slack_configured:
        return
    if bool(settings.slack_client_id) != bool(settings.slack_client_secret):
        raise ConfigError("SLACK_CLIENT_ID and SLACK_CLIENT_SECRET go together")
    oauth = bool(settings.slack_client_id)
    socket_mode = bool(settings.slack_app_token)
    if oauth and socket_mode:
        raise ConfigError("OAuth installs (SLACK_CLIENT_ID) need HTTP mode: unset "
                          "SLACK_APP_TOKEN")
    if not socket_mode and not settings.slack_signing_secret:
        raise ConfigError("SLACK_SIGNING_SECRET is required with SLACK_BOT_TOKEN or "
                          "SLACK_CLIENT_ID (HTTP mode)")
    store = InstallationStore(runtime.state_sessions, runtime.clock, runtime.box,
                              runtime.read_sessions) \
        if oauth else None
    running = {"jobs": False}
    oauth_settings: AsyncOAuthSettings | None = None
    shared = Shared.of(runtime, reviews, routed=oauth)

    def build(found: InstalledBot) -> SlackBot:
        return build_bot(runtime, found.token, settings.slack_signing_secret, shared,
                         api_url=settings.slack_api_url, installed=found,
                         oauth_settings=oauth_settings,
                         fresh=registry.fresh_for(found.team_id),
                         gone=registry.gone_for(found.team_id))

    async def start_bot(bot: SlackBot) -> None:
        keep_alive(bot.deps.web)
        bot.deps.sender.worker.start()
        if running["jobs"]:
            bot.nudges.start()
            bot.deps.workspace.start()

    async def retoken(bot: SlackBot, found: InstalledBot) -> None:
        bot.deps.web.token = found.token
        bot.deps.workspace.retoken(found.token)

    async def refresh(refresh_token: str) -> Any:
        return await flow.client.oauth_v2_access(
            client_id=settings.slack_client_id or "",
            client_secret=settings.slack_client_secret or "",
            grant_type="refresh_token", refresh_token=refresh_token)

    registry = Installations(store, build, start_bot, retoken, refresh, runtime.clock.now_ms,
                             states=lambda: records_by_token(runtime.read_sessions))
    if oauth:
        assert settings.slack_client_id and settings.slack_client_secret
        flow = oauth_flow(
            client_id=settings.slack_client_id, client_secret=settings.slack_client_secret,
            public_url=settings.public_url, api_url=settings.slack_api_url,
            states=StateStore(runtime.state_sessions, runtime.clock),
            installations=InstallationStore(runtime.state_sessions, runtime.clock,
                                            runtime.box, runtime.read_sessions),
            on_installed=lambda team_id, _organisation: registry.installed(team_id))
        oauth_settings = flow.settings
        if who_is is not None:
            routes.extend(oauth_routes(flow, who_is))
        else:  # no sign-in pages here (a hosted service): installs are served, not started
            log.warning("slack_install_unavailable", reason="no sign-in pages in this process")
    _REGISTRIES[id(runtime)] = registry
    if settings.slack_bot_token:
        install_shortcut(runtime, registry, shared, socket_mode, oauth_settings)

    watching: list[asyncio.Task[None]] = []

    async def start(_runtime: Runtime) -> None:
        await registry.serve_all()
        watching.append(asyncio.create_task(registry.watch(), name="slack-installations"))
        watching.append(asyncio.create_task(registry.wake_due(
            lambda: due_teams(runtime.read_sessions)), name="slack-installations-due"))
        watching.append(asyncio.create_task(registry.keep_states(),
                                            name="slack-installations-states"))

    async def stop(_runtime: Runtime) -> None:
        for task in watching:
            task.cancel()
        await asyncio.gather(*watching, return_exceptions=True)
        for bot in list(registry.bots.values()):
            await bot.deps.sender.worker.stop()
            await close_keep_alive(bot.deps.web)
        registry.bots.clear()
        _REGISTRIES.pop(id(runtime), None)

    async def start_jobs() -> None:
        running["jobs"] = True
        for bot in list(registry.bots.values()):
            bot.nudges.start()
            bot.deps.workspace.start()

    async def stop_jobs() -> None:
        running["jobs"] = False
        for bot in list(registry.bots.values()):
            await bot.nudges.stop()
            await bot.deps.workspace.stop()

    if oauth:
        runtime.on_start.append(start)
        runtime.on_stop.append(stop)
        runtime.singletons.add("slack-installations", start_jobs, stop_jobs)
    if not socket_mode:
        # Malformed bodies answered 400 before bolt parses them (bot/slack/http_events.py).
        assert settings.slack_signing_secret is not None  # checked above
        routes.append(Route("/slack/events", events_endpoint(
            registry.app_for, settings.slack_signing_secret), methods=["POST"]))
    log.info("slack_installed", mode="socket" if socket_mode else "http", oauth=oauth,
             messages_per_second=shared.limits.workspace_per_second)


def install_shortcut(
    runtime: Runtime, registry: Installations, shared: Shared, socket_mode: bool,
    oauth_settings: AsyncOAuthSettings | None,
) -> None:
    """SLACK_BOT_TOKEN's workspace: one more installation (`registry.shortcut`)."""
    settings = runtime.settings
    assert settings.slack_bot_token is not None
    bot = build_bot(
        runtime, settings.slack_bot_token, settings.slack_signing_secret, shared,
        api_url=settings.slack_api_url, organisation_id=settings.slack_organisation,
        socket_mode=socket_mode, oauth_settings=oauth_settings,
    )
    registry.shortcut = bot
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
