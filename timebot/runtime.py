"""What the running process holds: settings, clock, the embedded service (if any), the bot's
state database, the GraphQL client and the people directory, plus the start/stop hooks of
the optional parts (Slack, mail, scheduler)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from mail.inbox import Inbox
from mail.outbound import Deliverer, MaildirOutbox, Outbox, OutboxWorker, RelaySettings, SmtpRelay
from plumbing.clock import Clock
from service.embedded import EmbeddedService
from timebot.client import ServiceClient
from timebot.config import Settings
from timebot.crypto import SecretBox
from timebot.directory import PeopleDirectory
from timebot.draining import DRAIN_SECONDS, Draining, drain_all
from timebot.embedded_keys import EmbeddedKeys
from timebot.events import EventBus, EventStore, EventWorker
from timebot.inprocess_transport import ExecutorTransport
from timebot.state.db import create_engine, migrate, session_factory
from timebot.state.singleton import SingletonJobs
from timebot.webhook_consumer import WebhookSubscriptions, local_receiver

Hook = Callable[["Runtime"], Awaitable[None]]


@dataclass
class Runtime:
    settings: Settings
    clock: Clock
    service: EmbeddedService | None
    state_engine: AsyncEngine
    state_sessions: async_sessionmaker[AsyncSession]
    client: ServiceClient
    directory: PeopleDirectory
    box: SecretBox
    events: EventStore
    bus: EventBus
    event_worker: EventWorker
    subscriptions: WebhookSubscriptions
    inbox: Inbox
    outbox: Outbox
    outbox_worker: OutboxWorker
    on_start: list[Hook] = field(default_factory=list)
    on_stop: list[Hook] = field(default_factory=list)
    # Before a graceful stop, while HTTP still serves (`drain`): stop taking work in.
    on_drain: list[Hook] = field(default_factory=list)
    subscribe_every_seconds: float = 30.0
    # Tests that need no webhook subscription (and no integration person) turn this off.
    auto_subscribe: bool = True
    # Wakes the inbox workers when something put a message in the inbox (set by mail).
    wake_inbox: Callable[[], None] = lambda: None
    # Listening sockets bound by a `timebot serve --workers N` parent ("http", "smtp",
    # "lmtp"): the listeners serve on these instead of binding their own.
    listen_sockets: dict[str, socket.socket] = field(default_factory=dict)
    # The jobs that run in one process at a time (timebot/state/singleton.py).
    singletons: SingletonJobs = field(init=False)
    _background: list[asyncio.Task[None]] = field(default_factory=list)
    _subscriber: asyncio.Task[None] | None = None

    def __post_init__(self) -> None:
        # Per role: a service-only and a fronts-only process sharing one database each run
        # their own jobs.
        self.singletons = SingletonJobs(
            self.state_sessions, name=f"singleton-jobs:{self.settings.role}"
        )

    async def start(self, *, background: bool = True) -> None:
        """Migrate and start; `background=False` (the CLI) starts no workers."""
        if self.service is not None:
            await self.service.start()
        await migrate(self.state_engine)
        if background:
            self.outbox_worker.start()
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
        if task is not None:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass

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
            await asyncio.sleep(self.subscribe_every_seconds)

    async def drain(self) -> None:
        """The first half of a graceful stop, while the HTTP app still serves (the embedded
        service is reached over it): stop taking mail in, finish the inbox and outbox rows
        claimed here. What is left queued waits for another process or the next start."""
        for hook in self.on_drain:
            await hook(self)
        await drain_all([self.outbox_worker], DRAIN_SECONDS)

    async def stop(self) -> None:
        await self.singletons.stop()
        for task in self._background:
            task.cancel()
        for task in self._background:
            try:
                await task
            except asyncio.CancelledError:
                pass
        self._background.clear()
        await self.event_worker.stop()
        await drain_all([self.outbox_worker], DRAIN_SECONDS)  # the mail it claimed goes out
        for hook in reversed(self.on_stop):
            await hook(self)
        await self.client.close()
        await self.state_engine.dispose()
        if self.service is not None:
            await self.service.stop()


class DrainingOutboxWorker(Draining, OutboxWorker):
    """The outbox worker, finishing the deliveries it claimed when stopped."""


def build_runtime(settings: Settings, clock: Clock, *, in_process: bool = False) -> Runtime:
    """`in_process`: reach the embedded service through ASGI instead of the network (the CLI,
    when no server is running)."""
    service = EmbeddedService(settings.service_database_url, clock=clock) if settings.embedded \
        else None
    transport: httpx.AsyncBaseTransport | None = None
    if in_process and service is not None:
        from starlette.applications import Starlette

        transport = httpx.ASGITransport(app=Starlette(routes=service.routes()))
    elif service is not None and settings.role == "all":
        # The server with its service embedded: the fronts' requests go to its executor
        # in-process (no loopback HTTP request per GraphQL call).
        transport = ExecutorTransport(service.executor)
    client = ServiceClient(settings.graphql_url, http_transport=transport)
    state_engine = create_engine(settings.database_url)
    state_sessions = session_factory(state_engine)
    provisioner = (
        EmbeddedKeys(service.sessions, clock, settings.mail_from) if service is not None else None
    )
    box = SecretBox(settings.secret_key)
    directory = PeopleDirectory(
        state_sessions, client, box, clock, provisioner, settings.integration_key
    )
    events = EventStore(state_sessions, clock)
    bus = EventBus()
    # The service and the fronts in one process: the service's events reach the fronts
    # in-process (service.webhooks.local), not by an HTTP request per event. (The CLI
    # registers that webhook too, and leaves its deliveries to the server.)
    in_process_events = service is not None and settings.role == "all"
    subscriptions = WebhookSubscriptions(
        state_sessions, client, box, directory, settings.public_url, clock,
        service.sessions if in_process_events and service is not None else None,
    )
    outbox = Outbox(state_sessions, clock)
    event_worker = EventWorker(events, bus)
    if in_process_events and service is not None and not in_process:
        service.webhooks.local_receiver = local_receiver(events, event_worker.wake)
    return Runtime(
        settings, clock, service, state_engine, state_sessions, client, directory, box,
        events, bus, event_worker, subscriptions, Inbox(state_sessions, clock),
        outbox, DrainingOutboxWorker(outbox, deliverer(settings)),
    )


def deliverer(settings: Settings) -> Deliverer:
    """The relay when TIMEBOT_SMTP_RELAY is set, else the local Maildir outbox."""
    if settings.smtp_relay:
        return SmtpRelay(RelaySettings.parse(settings.smtp_relay))
    return MaildirOutbox(settings.outbox_dir)
