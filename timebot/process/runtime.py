"""What the running process holds: settings, clock, the bot's
state database, the GraphQL client and the people directory, plus the start/stop hooks of
the optional parts (Slack, mail, scheduler)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from plumbing.clock import Clock
from plumbing.tasks import stop_task
from timebot.client import ServiceClient
from timebot.config import Settings
from timebot.directory.people import PeopleDirectory
from timebot.events.bus import EventBus, EventStore, EventWorker
from timebot.events.subscriptions import WebhookSubscriptions
from timebot.secret_key.crypto import SecretBox
from timebot.state.db import migrate, session_factory
from timebot.state.draining import DRAIN_SECONDS, drain_all
from timebot.state.singleton import SingletonJobs
from timebot.state.worker import PollingWorker
from timebot.timeentry.rules import RulesCache

Hook = Callable[["Runtime"], Awaitable[None]]


@dataclass
class Runtime:
    settings: Settings
    clock: Clock
    state_engine: AsyncEngine
    state_sessions: async_sessionmaker[AsyncSession]
    client: ServiceClient
    directory: PeopleDirectory
    box: SecretBox
    events: EventStore
    bus: EventBus
    event_worker: EventWorker
    subscriptions: WebhookSubscriptions
    # Before the state database migrates (the embedded service starts here) / after it is
    # closed (the embedded service stops last).
    before_start: list[Hook] = field(default_factory=list)
    after_stop: list[Hook] = field(default_factory=list)
    on_start: list[Hook] = field(default_factory=list)
    on_stop: list[Hook] = field(default_factory=list)
    # Before a graceful stop, while HTTP still serves (`drain`): stop taking work in.
    on_drain: list[Hook] = field(default_factory=list)
    subscribe_every_seconds: float = 30.0
    # Tests that need no webhook subscription (and no integration person) turn this off.
    auto_subscribe: bool = True
    # Workers of durable tables (mail's outbox): started with the background work, drained
    # at a graceful stop.
    queue_workers: list[PollingWorker] = field(default_factory=list)
    # Listening sockets bound by a `timebot serve --workers N` parent ("http", "smtp",
    # "lmtp"): the listeners serve on these instead of binding their own.
    listen_sockets: dict[str, socket.socket] = field(default_factory=dict)
    # The bot database's engine for transactions that only read (SQLite: a deferred BEGIN,
    # beside a writer in WAL mode, instead of queuing behind every writer of the process for
    # BEGIN IMMEDIATE). None: the state engine serves them (PostgreSQL: readers never wait).
    read_engine: AsyncEngine | None = None
    # Sessions for pure reads (never a write, nor a read that decides one): `read_engine`'s,
    # else the state sessions.
    read_sessions: async_sessionmaker[AsyncSession] = field(init=False)
    # The jobs that run in one process at a time (timebot/state/singleton.py).
    singletons: SingletonJobs = field(init=False)
    # Each person's rules of time entry, as the fronts refuse early (timebot/timeentry/rules.py).
    entry_rules: RulesCache = field(init=False)
    _subscriber: asyncio.Task[None] | None = None
    # Set when the bus's event kinds grew: the subscription loop runs at once.
    _resubscribe: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.read_sessions = (session_factory(self.read_engine) if self.read_engine is not None
                              else self.state_sessions)
        # Per role: a service-only and a fronts-only process sharing one database each run
        # their own jobs.
        self.singletons = SingletonJobs(
            self.state_sessions, name=f"singleton-jobs:{self.settings.role}"
        )
        self.entry_rules = RulesCache(self.client, self.clock.now_ms)
        self.bus.subscribe("entry-rules", self.entry_rules.on_event, self.entry_rules.handles)
        self.bus.on_change.append(self._resubscribe.set)

    async def start(self, *, background: bool = True) -> None:
        """Migrate and start; `background=False` (the CLI) starts no workers."""
        for hook in self.before_start:
            await hook(self)
        await migrate(self.state_engine)
        if background:
            for worker in self.queue_workers:
                worker.start()
        if background and self.settings.runs_fronts:
            self.event_worker.start()
            if self.auto_subscribe:
                self.singletons.add("webhook-subscription", self._start_subscriber,
                                    self._stop_subscriber)
        for hook in self.on_start:
            await hook(self)
        if background:
            self.singletons.start()

    def _start_subscriber(self) -> None:
        if self._subscriber is None:
            self._subscriber = asyncio.create_task(self._keep_subscribed())

    async def _stop_subscriber(self) -> None:
        task, self._subscriber = self._subscriber, None
        await stop_task(task)

    async def _keep_subscribed(self) -> None:
        """Subscribe to every organisation served (new ones appear while running), once the
        HTTP server is up: the embedded service is reached over HTTP like a hosted one."""
        import structlog

        log = structlog.get_logger("timebot.runtime")
        await asyncio.sleep(0.2)
        while True:
            try:
                await self.subscriptions.ensure_all()
            except Exception as error:  # not reachable yet, or a hosted service is down
                log.warning("webhook_subscription_pending", error=str(error))
            self._resubscribe.clear()
            try:
                await asyncio.wait_for(self._resubscribe.wait(), self.subscribe_every_seconds)
            except TimeoutError:
                pass

    async def drain(self) -> None:
        """The first half of a graceful stop, while the HTTP app still serves (the embedded
        service is reached over it): stop taking mail in, finish the inbox and outbox rows
        claimed here. What is left queued waits for another process or the next start."""
        for hook in self.on_drain:
            await hook(self)
        await drain_all(self.queue_workers, DRAIN_SECONDS)

    async def stop(self) -> None:
        await self.singletons.stop()
        await self.event_worker.stop()
        await drain_all(self.queue_workers, DRAIN_SECONDS)  # the mail it claimed goes out
        for hook in reversed(self.on_stop):
            await hook(self)
        await self.client.close()
        await self.state_engine.dispose()
        if self.read_engine is not None:
            await self.read_engine.dispose()
        for hook in reversed(self.after_stop):
            await hook(self)
