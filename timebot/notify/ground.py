"""What the notification jobs use of the running process. `timebot.process.runtime.Runtime`
holds all of it, and more (the start and stop hooks, the bus, the jobs of one process at a
time): typed by these Protocols, notify/ reads the process it runs in without importing the
runtime, which is assembled above it (`timebot.process.notifications` wires the jobs onto a
runtime)."""

from __future__ import annotations

from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from plumbing.clock import Clock
from timebot.client import ServiceClient
from timebot.config import Settings
from timebot.directory.people import PeopleDirectory
from timebot.events.bus import EventStore, EventWorker
from timebot.events.subscriptions import WebhookSubscriptions


class Ground(Protocol):
    """Settings, clock, the bot's database and the service as the organisation reads it."""

    settings: Settings
    clock: Clock
    state_sessions: async_sessionmaker[AsyncSession]
    read_sessions: async_sessionmaker[AsyncSession]
    client: ServiceClient
    directory: PeopleDirectory


class CatchUpGround(Ground, Protocol):
    """What the jobs that feed the bus what the webhooks did not bring use besides: the event
    store and its worker, and which organisations a webhook serves."""

    events: EventStore
    event_worker: EventWorker
    subscriptions: WebhookSubscriptions
