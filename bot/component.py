"""Installs the Slack app into the one HTTP app when SLACK_BOT_TOKEN is set: POST /slack/events
(requests verified with SLACK_SIGNING_SECRET, five-minute timestamp window, by slack-bolt), or
Socket Mode when SLACK_APP_TOKEN is set; plus the sender worker, the nudge loop and the bus
subscribers (approval DMs and outcomes, Journal threads)."""

from __future__ import annotations

import structlog
from slack_bolt.adapter.starlette.async_handler import AsyncSlackRequestHandler
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.app import SlackBot, close_keep_alive, keep_alive
from bot.approvals import ApprovalsPart
from bot.home import HomePart
from bot.nudges import NudgesPart
from bot.owner_notices import OwnerNoticesPart
from bot.socket_mode import SocketMode
from bot.threads import ThreadsPart
from bot.time_commands import TimeButtons
from timebot.errors import ConfigError
from timebot.runtime import Runtime

log = structlog.get_logger("timebot.slack")

_BOTS: dict[int, SlackBot] = {}


class SlackParts:
    def __init__(self, bot: SlackBot) -> None:
        self.approvals = ApprovalsPart(bot)
        self.threads = ThreadsPart(bot)
        self.nudges = NudgesPart(bot)
        self.home = HomePart(bot)
        self.time_buttons = TimeButtons(bot)
        self.owner_notices = OwnerNoticesPart(bot)


def bot_of(runtime: Runtime) -> SlackBot | None:
    """The Slack app of a running timebot (None when Slack is not configured)."""
    return _BOTS.get(id(runtime))


def install_slack(runtime: Runtime, routes: list[BaseRoute]) -> None:
    settings = runtime.settings
    if not settings.slack_bot_token:
        return
    socket_mode = bool(settings.slack_app_token)
    if not socket_mode and not settings.slack_signing_secret:
        raise ConfigError("SLACK_SIGNING_SECRET is required with SLACK_BOT_TOKEN (HTTP mode)")
    bot = SlackBot(
        runtime, settings.slack_bot_token, settings.slack_signing_secret,
        api_url=settings.slack_api_url, organisation_id=settings.slack_organisation,
        socket_mode=socket_mode,
    )
    bot.parts = SlackParts(bot)
    _BOTS[id(runtime)] = bot

    async def start(_runtime: Runtime) -> None:
        keep_alive(bot.client)
        bot.sender.worker.start()

    async def stop(_runtime: Runtime) -> None:
        await bot.sender.worker.stop()
        await close_keep_alive(bot.client)
        _BOTS.pop(id(runtime), None)

    runtime.on_start.append(start)
    runtime.on_stop.append(stop)
    # The nudge loop runs in one process at a time (timebot/state/singleton.py).
    runtime.singletons.add("slack-nudges", bot.parts.nudges.start, bot.parts.nudges.stop)
    if settings.slack_app_token:
        # Connects after `start` and (stop hooks run in reverse) disconnects before `stop`.
        socket = SocketMode(bot, settings.slack_app_token)
        runtime.on_start.append(socket.start)
        runtime.on_stop.append(socket.stop)
    else:
        http_handler = AsyncSlackRequestHandler(bot.app)

        async def events(request: Request) -> Response:
            return await http_handler.handle(request)

        routes.append(Route("/slack/events", events, methods=["POST"]))
    log.info("slack_installed", mode="socket" if socket_mode else "http")
