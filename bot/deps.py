"""What the bot's parts may use: the Web API client, identity, the rate-limited sender, the
command registry, the runtime and the slots bounding the work after an ack.

The bottom of bot/: it imports no part and no app, so a part given a `SlackDeps` never reaches
the module that built it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from slack_sdk.web.async_client import AsyncWebClient

from bot.commands import CommandRegistry
from bot.identity import Identity
from bot.sender import SlackSender
from bot.workspace import Workspace
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
    # so acks stay fast (the response_url stays valid for 30 minutes).
    work_slots: asyncio.Semaphore
