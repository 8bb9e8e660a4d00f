"""Builds the process's runtime from settings: the embedded service (when no hosted one is
named) with its start and stop hooks, the bot's state database, the GraphQL client (in-process
beside an embedded service), the people directory, events, and mail's queues."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from mail.queues.inbox import Inbox
from mail.queues.outbox import (
    Deliverer,
    MaildirOutbox,
    Outbox,
    OutboxWorker,
    RelaySettings,
    SmtpRelay,
)
from mail.queues.parts import MailParts
from plumbing.clock import Clock
from service.embedded import EmbeddedService
from service.outbound import OutboundPolicy
from service.webhooks.local import LOCAL_URL, ensure_local_webhook
from shell.embedded_keys import EmbeddedKeys
from shell.executor_call import ExecutorCall
from timebot.client import ServiceCall, ServiceClient
from timebot.config import Settings
from timebot.directory.organisations import OrganisationKeys
from timebot.directory.people import PeopleDirectory
from timebot.events.bus import EventBus, EventStore, EventWorker
from timebot.events.subscriptions import WebhookSubscriptions
from timebot.events.webhooks import local_receiver
from timebot.process.runtime import Runtime
from timebot.secret_key.crypto import SecretBox
from timebot.state.db import create_engine, read_only_engine, session_factory
from timebot.state.draining import Draining


class DrainingOutboxWorker(Draining, OutboxWorker):
    """The outbox worker, finishing the deliveries it claimed when stopped."""


@dataclass
class Built:
    """The runtime and the embedded service it was built around (None against a hosted one)."""

    runtime: Runtime
    service: EmbeddedService | None
    mail: MailParts


@dataclass(frozen=True)
class EmbeddedWebhooks:
    """timebot's in-process webhook on the embedded service (service.webhooks.local)."""

    sessions: async_sessionmaker[AsyncSession]
    url: str = LOCAL_URL

    async def ensure(self, organisation_id: str, now_ms: int,
                     events: Sequence[str] | None) -> tuple[str, str]:
        return await ensure_local_webhook(self.sessions, organisation_id, now_ms, events)


def build_runtime(settings: Settings, clock: Clock, *, in_process: bool = False) -> Built:
    """`in_process`: reach the embedded service in this process instead of over the network
    (a command, when no server is running)."""
    service = EmbeddedService(
        settings.service_database_url, clock=clock,
        outbound=OutboundPolicy(settings.outbound_allowed_networks),
    ) if settings.embedded else None
    direct: ServiceCall | None = None
    if service is not None and (in_process or settings.role == "all"):
        # The server with its service embedded, or a command: the fronts' requests go to its
        # executor in-process (no HTTP request per GraphQL call, not even one handled
        # in-process: a command's run of 1,000 reminders made 4,000), which is made at the
        # first call (a command that never calls the service builds no schema).
        embedded = service
        direct = ExecutorCall(make=lambda: embedded.executor)
    client = ServiceClient(settings.graphql_url, direct=direct)
    state_engine = create_engine(settings.database_url)
    state_sessions = session_factory(state_engine)
    provisioner = (
        EmbeddedKeys(service.sessions, clock, settings.mail_from) if service is not None else None
    )
    box = SecretBox(settings.secret_key)
    # A hosted service: the organisations registered with `timebot orgs add`, each its key.
    organisations = None if service is not None else OrganisationKeys(
        state_sessions, client, box, clock)
    directory = PeopleDirectory(
        state_sessions, client, box, clock, provisioner, settings.integration_key,
        organisations,
    )
    events = EventStore(state_sessions, clock)
    bus = EventBus()
    # The service and the fronts in one process: the service's events reach the fronts
    # in-process (EmbeddedWebhooks), not by an HTTP request per event. (The CLI
    # registers that webhook too, and leaves its deliveries to the server.)
    in_process_events = service is not None and settings.role == "all"
    subscriptions = WebhookSubscriptions(
        state_sessions, client, box, directory, settings.public_url, clock,
        EmbeddedWebhooks(service.sessions) if in_process_events and service is not None
        else None,
    )
    outbox = Outbox(state_sessions, clock)
    event_worker = EventWorker(events, bus)
    if in_process_events and service is not None and not in_process:
        service.webhooks.local_receiver = local_receiver(events, event_worker.wake_for)
    runtime = Runtime(
        settings, clock, state_engine, state_sessions, client, directory, box,
        events, bus, event_worker, subscriptions,
        read_engine=read_only_engine(settings.database_url),
    )
    mail = MailParts(
        Inbox(state_sessions, clock), outbox, DrainingOutboxWorker(outbox, deliverer(settings))
    )
    runtime.queue_workers.append(mail.outbox_worker)
    if service is not None:
        embedded = service

        async def start_service(_runtime: Runtime) -> None:
            await embedded.start()

        async def stop_service(_runtime: Runtime) -> None:
            await embedded.stop()

        runtime.before_start.append(start_service)
        runtime.after_stop.append(stop_service)
    return Built(runtime, service, mail)


def deliverer(settings: Settings) -> Deliverer:
    """The relay when TIMEBOT_SMTP_RELAY is set, else the local Maildir outbox."""
    if settings.smtp_relay:
        return SmtpRelay(RelaySettings.parse(settings.smtp_relay))
    return MaildirOutbox(settings.outbox_dir)
