"""Inbound mail as a part of the process: the SMTP listener (TIMEBOT_SMTP_HOST/PORT; port 0
turns it off), the LMTP listener (TIMEBOT_LMTP_PORT), the IMAP poller (TIMEBOT_IMAP_URL) and the
inbox workers running `process_message` — all started and stopped with the runtime.

Every way in ends in the same durable inbox, and every message in the same processor, which
hands it to the handler of its recipient kind (HANDLERS: the one place naming them all)."""

from __future__ import annotations

import asyncio

import structlog
from starlette.routing import BaseRoute

from mail.inbound.addresses import RecipientKind, reply_token_check
from mail.inbound.handling import Handler
from mail.inbound.imap_poller import ImapPoller, ImapSettings
from mail.inbound.listener import InboundHandler, start_listener
from mail.inbound.process import MessageProcessor
from mail.queues.inbox import InboxWorker
from mail.queues.parts import MailParts
from mail.replies.approval_reply import process_approval_reply
from mail.replies.away_notice import note_away
from mail.replies.time_entry import process_time_entry
from timebot.process.runtime import Runtime
from timebot.state.draining import DRAIN_SECONDS, Draining, drain_all

log = structlog.get_logger("mail.inbound")

INBOX_WORKERS = 4
"""Workers claiming inbox rows side by side (each row is leased to one): replies to different
timesheets are processed concurrently; the service serialises what touches one timesheet."""

INBOX_BATCH = 8
"""Rows a worker claims at once, processed side by side (one lane's one after another), the
next claim after the batch: up to INBOX_WORKERS x INBOX_BATCH replies in hand. A process whose
event loop is busy (a Monday's 900 submissions in a minute) stretches each reply's wall time to
seconds; with 8 in hand (batches of 2) replies were then processed at 1-2 a second while 5
arrived and receipts waited 23 s at the median (bench monday, SQLite, one worker); with 32 they
kept pace (5 a second) and waited 0.65 s."""

HANDLERS: dict[RecipientKind, Handler] = {
    RecipientKind.APPROVAL_REPLY: process_approval_reply,
    RecipientKind.TIME_ENTRY: process_time_entry,
}
"""The dispatch by recipient kind: one handler per kind of our addresses."""


class DrainingInboxWorker(Draining, InboxWorker):
    """An inbox worker that, when stopped, finishes the batch it claimed."""


class InboundComponent:
    def __init__(
        self, runtime: Runtime, mail: MailParts, *, workers: int = INBOX_WORKERS
    ) -> None:
        self.runtime = runtime
        self.mail = mail
        self.processor = MessageProcessor(runtime, mail, HANDLERS, auto_replies=note_away)
        self.workers = [
            DrainingInboxWorker(
                mail.inbox, self.processor.process_message, poll_seconds=2.0,
                batch=INBOX_BATCH
            )
            for _ in range(max(1, workers))
        ]
        self.servers: list[asyncio.base_events.Server] = []
        self.poller: ImapPoller | None = None

    def wake(self) -> None:
        for worker in self.workers:
            worker.wake()

    async def start(self, runtime: Runtime) -> None:
        settings = runtime.settings
        check = reply_token_check(settings.secret_key, runtime.clock.now_ms)
        listeners = [("smtp", settings.smtp_port, False)]
        if settings.lmtp_port:
            listeners.append(("lmtp", settings.lmtp_port, True))
        for source, port, lmtp in listeners:
            if not port:
                continue
            handler = InboundHandler(
                self.mail.inbox, settings.mail_domain, check, self.wake, source=source,
                trusted_networks=settings.mail_trusted_networks,
            )
            self.servers.append(
                await start_listener(handler, settings.smtp_host, port, lmtp=lmtp,
                                     hostname=settings.mail_domain,
                                     sock=runtime.listen_sockets.get(source))
            )
            log.info("listening", protocol=source, host=settings.smtp_host, port=port)
        if settings.imap_url:
            self.poller = ImapPoller(
                ImapSettings.parse(settings.imap_url), self.mail.inbox, runtime.state_sessions,
                self.wake,
            )
            # One process at a time polls the mailbox (timebot/state/singleton.py).
            runtime.singletons.add("imap-poller", self.poller.start, self.poller.stop)
        for worker in self.workers:
            worker.start()

    async def stop(self, runtime: Runtime) -> None:
        """Stop accepting mail, then let the inbox workers finish the messages they claimed
        (DRAIN_SECONDS at most: what is left is taken over after its lease). Also the
        runtime's drain hook, run before HTTP stops; after it, stopping finds nothing to do."""
        for server in self.servers:
            server.close()
        for server in self.servers:
            await server.wait_closed()
        self.servers.clear()
        self.poller = None  # stopped with the runtime's singleton jobs
        await drain_all(self.workers, DRAIN_SECONDS)


def install_inbound(
    runtime: Runtime, mail: MailParts, routes: list[BaseRoute]
) -> InboundComponent | None:
    """Start inbound mail with the runtime when any way in is configured: SMTP, LMTP, IMAP, or
    the local outbox page (no relay), whose answers take the same inbound path."""
    settings = runtime.settings
    if not (settings.smtp_port or settings.lmtp_port or settings.imap_url
            or not settings.smtp_relay):
        return None
    inbound = InboundComponent(runtime, mail)
    mail.wake_inbox = inbound.wake
    runtime.on_start.append(inbound.start)
    runtime.on_stop.append(inbound.stop)
    runtime.on_drain.append(inbound.stop)
    return inbound
