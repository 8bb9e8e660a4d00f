"""What the bot's parts may use: the Web API client, identity, the rate-limited sender, the
command registry, the runtime, the slots bounding the work after an ack, and where the parts
register for the ground's events and requests (`hub`, bot.slack.routes).

The bottom of bot/: it imports no part and no app, so a part given a `SlackDeps` never reaches
the module that built it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.commands import CommandRegistry
from bot.slack.identity import Identity
from bot.slack.routes import Hub
from bot.slack.sender import SlackSender
from bot.slack.workspace import Workspace
from timebot.runtime import Runtime


@dataclass(frozen=True)
class SlackDeps:
    runtime: Runtime
    web: AsyncWebClient
    identity: Identity
    sender: SlackSender
    registry: CommandRegistry
    # The workspace: its team, the one organisation it serves, whether it is installed.
    workspace: Workspace
    # The work after an ack, bounded: a burst queues here instead of crowding the event loop,
    # so acks stay fast (the response_url stays valid for 30 minutes). One for the process:
    # every installation's bot shares it (#27).
    work_slots: asyncio.Semaphore
    # Bus subscribers, review / climb / report channels: on the runtime itself
    # (SLACK_BOT_TOKEN's bot), or routed by organisation (the OAuth installations').
    hub: Hub
