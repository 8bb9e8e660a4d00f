"""Outbound mail: a durable outbox table, and a worker that hands each message to the relay
(aiosmtplib: STARTTLS, SMTPS, AUTH) or, without a relay, to the local Maildir outbox.

A message stays in the table until it is delivered: a relay outage loses nothing (retried with
backoff), and a message is never sent twice by two processes (claimed with a lease). A
scheduled message may carry a `dedupe_key` so that it is enqueued once however many
processes schedule it.
"""

from __future__ import annotations

import asyncio
import mailbox
import uuid
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote, urlsplit

import aiosmtplib
import structlog
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from mail.mime_writer import outgoing_message
from timebot.clock import Clock
from timebot.state.db import insert_ignoring, unit_of_work
from timebot.state.models import OutboxMessage
from timebot.state.queue import DONE, FAILED, QUEUED, FinishBatch, claim_rows, finish_row
from timebot.worker import PollingWorker

log = structlog.get_logger("mail.outbound")

RETRY_DELAYS_MS = (30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000, 3_600_000)
FLUSH_SECONDS = 1.0  # delivered rows are marked done at least this often (OutboxWorker)


class DeliveryError(Exception):
    def __init__(self, message: str, permanent: bool) -> None:
        super().__init__(message)
        self.permanent = permanent


class Deliverer(Protocol):
    async def deliver(self, raw: bytes, envelope_from: str, rcpt_tos: list[str]) -> None: ...


@dataclass(frozen=True)
class RelaySettings:
    host: str
    port: int
    implicit_tls: bool = False
    username: str | None = None
    password: str | None = None

    @classmethod
    def parse(cls, value: str) -> RelaySettings:
        """`host:port`, `smtp://[user:pass@]host:port` (STARTTLS when offered) or `smtps://…`."""
        text = value if "://" in value else f"smtp://{value}"
        parts = urlsplit(text)
        if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
            raise ValueError(f"TIMEBOT_SMTP_RELAY must be host:port or smtp[s]://…, not {value!r}")
        implicit = parts.scheme == "smtps"
        return cls(
            host=parts.hostname,
            port=parts.port or (465 if implicit else 25),
            implicit_tls=implicit,
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
        )


class SmtpRelay:
    def __init__(self, settings: RelaySettings, timeout: float = 30.0) -> None:
        self.settings = settings
        self.timeout = timeout

    async def deliver(self, raw: bytes, envelope_from: str, rcpt_tos: list[str]) -> None:
        relay = self.settings
        # The client object rather than aiosmtplib.send: receipts go out with a null
        # envelope sender (MAIL FROM:<>), which send() refuses.
        client = aiosmtplib.SMTP(
            hostname=relay.host,
            port=relay.port,
            use_tls=relay.implicit_tls,
            start_tls=None if not relay.implicit_tls else False,
            username=relay.username,
            password=relay.password,
            timeout=self.timeout,
        )
        try:
            async with client:
                errors, _ = await client.sendmail(envelope_from, rcpt_tos, raw)
        except aiosmtplib.SMTPResponseException as error:
            raise DeliveryError(f"{error.code} {error.message}", error.code >= 500) from error
        except (aiosmtplib.SMTPException, OSError, TimeoutError) as error:
            raise DeliveryError(str(error), permanent=False) from error
        refused = {rcpt: response for rcpt, response in errors.items()}
        if refused:
            raise DeliveryError(f"refused recipients: {refused}", permanent=False)


class MaildirOutbox:
    """Without a relay, mail is delivered here (`<data dir>/outbox/new/`) for GET /outbox."""

    def __init__(self, path: Path) -> None:
        self.path = path
        for folder in ("tmp", "new", "cur"):
            (path / folder).mkdir(parents=True, exist_ok=True)
        self._maildir = mailbox.Maildir(str(path), create=False)

    async def deliver(self, raw: bytes, envelope_from: str, rcpt_tos: list[str]) -> None:
        envelope = f"X-Timebot-Envelope-From: <{envelope_from}>\r\n".encode()
        envelope += f"X-Timebot-Envelope-To: {', '.join(rcpt_tos)}\r\n".encode()
        await asyncio.to_thread(self._maildir.add, envelope + raw)


def new_message(
    *,
    mail_from: str,
    to: str,
    subject: str,
    text: str,
    html: str | None = None,
    message_id: str | None = None,
    mail_domain: str,
    headers: dict[str, str] | None = None,
) -> EmailMessage:
    """A text (and HTML) message with our Message-ID and Date.

    Written straight to bytes (mail.mime_writer): an `OutgoingMessage`, whose `as_bytes()` and
    header getters need no parsing (any other use of it as an EmailMessage parses it first)."""
    fields = [
        ("From", mail_from),
        ("To", to),
        ("Subject", subject),
        ("Date", formatdate(localtime=False)),
        ("Message-ID", message_id or make_msgid(domain=mail_domain)),
        *(headers or {}).items(),
    ]
    return outgoing_message(fields, text, html)


class Outbox:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], clock: Clock) -> None:
        self.sessions = sessions
        self.clock = clock

    async def enqueue(
        self,
        message: EmailMessage,
        *,
        kind: str,
        envelope_from: str,
        rcpt_tos: list[str] | None = None,
        dedupe_key: str | None = None,
        session: AsyncSession | None = None,
    ) -> bool:
        """Queue a message; False when one with the same dedupe_key was queued before.
        Pass `session` to enqueue inside a larger unit of work (committed with it)."""
        recipients = rcpt_tos or [address for _, address in _addresses(message, "To", "Cc")]
        now = self.clock.now_ms()
        values = {
            "id": uuid.uuid4().hex[:24],
            "message_id": str(message["Message-ID"] or ""),
            "dedupe_key": dedupe_key,
            "kind": kind,
            "envelope_from": envelope_from,
            "rcpt_tos": recipients,
            "subject": str(message["Subject"] or ""),
            "raw": message.as_bytes(),
            "status": QUEUED,
            "attempts": 0,
            "next_attempt_ms": now,
            "created_ms": now,
        }
        if session is not None:
            return await _insert(session, values)
        async with unit_of_work(self.sessions) as own_session:
            return await _insert(own_session, values)

    async def messages(self, kind: str | None = None) -> list[OutboxMessage]:
        async with self.sessions() as session:
            statement = select(OutboxMessage).order_by(OutboxMessage.created_ms, OutboxMessage.id)
            if kind is not None:
                statement = statement.where(OutboxMessage.kind == kind)
            return list(await session.scalars(statement))


async def _insert(session: AsyncSession, values: dict[str, Any]) -> bool:
    """One INSERT (ON CONFLICT (dedupe_key) DO NOTHING with a dedupe key): True when the row
    went in."""
    conflict = ("dedupe_key",) if values.get("dedupe_key") is not None else ()
    result: Any = await session.execute(
        insert_ignoring(session, OutboxMessage, conflict), values
    )
    return bool(result.rowcount)


def _addresses(message: EmailMessage, *names: str) -> list[tuple[str, str]]:
    from email.utils import getaddresses

    return getaddresses([str(value) for name in names for value in message.get_all(name, [])])


class OutboxWorker(PollingWorker):
    name = "outbox-worker"

    def __init__(
        self,
        outbox: Outbox,
        deliverer: Deliverer,
        *,
        lease_ms: int = 120_000,
        poll_seconds: float = 2.0,
        batch: int = 20,
        concurrency: int = 4,
    ) -> None:
        super().__init__(poll_seconds)
        self.outbox = outbox
        self.deliverer = deliverer
        self.lease_ms = lease_ms
        self.batch = batch
        self.concurrency = concurrency

    async def run_once(self) -> int:
        """Deliver what is due, up to `concurrency` messages at a time (each Maildir delivery
        waits for its fsync; each relay delivery for its SMTP exchange). Delivered rows are
        marked done together, each with its own delivery time (those this worker still
        holds): at the end of the batch, and after FLUSH_SECONDS of deliveries; a failed
        delivery is recorded at once. A process that dies in between sends those rows again
        after the lease (at least once, never dropped)."""
        clock = self.outbox.clock
        rows = await claim_rows(
            self.outbox.sessions,
            OutboxMessage,
            owner=self.owner,
            now_ms=clock.now_ms(),
            lease_ms=self.lease_ms,
            limit=self.batch,
            due_column=OutboxMessage.next_attempt_ms,
            order_column=OutboxMessage.next_attempt_ms,
        )
        delivered = FinishBatch(self.outbox.sessions, OutboxMessage, self.owner, FLUSH_SECONDS)
        slots = asyncio.Semaphore(self.concurrency)

        async def deliver(row: OutboxMessage) -> None:
            async with slots:
                try:
                    await self.deliverer.deliver(row.raw, row.envelope_from, list(row.rcpt_tos))
                except DeliveryError as error:
                    delay = RETRY_DELAYS_MS[min(row.attempts, len(RETRY_DELAYS_MS)) - 1]
                    log.warning("mail_delivery_failed", id=row.id, error=str(error),
                                permanent=error.permanent, attempts=row.attempts)
                    await finish_row(
                        self.outbox.sessions, OutboxMessage, row.id, self.owner,
                        status=FAILED if error.permanent else QUEUED,
                        last_error=str(error),
                        next_attempt_ms=clock.now_ms() + delay,
                        lease_owner=None,
                    )
                    return
                await delivered.add(
                    row.id, status=DONE, sent_ms=clock.now_ms(), lease_owner=None,
                    last_error=None,
                )

        try:
            results = await asyncio.gather(*(deliver(row) for row in rows),
                                           return_exceptions=True)
        finally:  # also when cancelled (stop) or a deliverer raised something else
            await delivered.flush()
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return len(rows)
