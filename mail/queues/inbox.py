"""The durable inbox: every accepted message is committed here before we say `250`, and a
worker claims and processes it afterwards (slow work never holds an SMTP session).

The same message delivered twice — over SMTP and IMAP, or retried by an MTA after a crash —
has one row, by its Message-ID (or a hash of its bytes when it has none).
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from email.parser import BytesHeaderParser
from email.policy import compat32
from email.utils import getaddresses
from typing import Any

import structlog
from sqlalchemy import Row, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from plumbing.clock import Clock
from timebot.inbound_text import has_control
from timebot.state.db import insert_ignoring, unit_of_work
from timebot.state.models import InboxMessage
from timebot.state.queue import DONE, FAILED, QUEUED, FinishBatch, claim_records, finish_in
from timebot.state.retry import Backoff, after_failure, is_temporary
from timebot.state.worker import PollingWorker

log = structlog.get_logger("mail.inbox")

_MESSAGE_ID = re.compile(r"<\s*([^<>\s]+)\s*>")
FLUSH_SECONDS = 0.25  # a processed message is marked done within about this (InboxWorker)
BACKOFF = Backoff(2_000, 300_000)  # a failed message is tried again after 2 s, 4 s … 5 min


def message_key(raw: bytes) -> str:
    """`mid:<message-id>` (case of the domain folded), else `sha256:<hash of the bytes>`."""
    headers = BytesHeaderParser(policy=compat32).parsebytes(raw)
    value = str(headers.get("Message-ID", "") or "")
    found = _MESSAGE_ID.search(value)
    identifier = _readable(found.group(1)) if found else None
    if identifier:
        local, _, domain = identifier.rpartition("@")
        normalised = f"{local}@{domain.lower()}" if local else identifier
        return f"mid:{normalised}"[:400]
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def _readable(identifier: str) -> str | None:
    """The Message-ID as text (its 8-bit bytes read as UTF-8), or None when it holds what no
    Message-ID may — control characters, bytes that are not UTF-8 — which no database column
    of text would take either (PostgreSQL refuses NUL)."""
    try:
        text = identifier.encode("utf-8", "surrogateescape").decode("utf-8")
    except UnicodeError:
        return None
    return None if has_control(text) else text  # (the pattern leaves out white space)


def inbox_lane(raw: bytes, source: str, mail_from: str, rcpt_tos: list[str]) -> str:
    """The lane of a message: its sender and its recipients. One person's mails to one address
    (a time entry then `submit`; two answers to one review) are processed in the order they
    came. Over IMAP, which has no envelope, the From and To headers say who and to whom."""
    sender, recipients = mail_from, list(rcpt_tos)
    if source == "imap" or not sender:
        headers = BytesHeaderParser(policy=compat32).parsebytes(raw)
        senders = getaddresses([str(value) for value in headers.get_all("From", [])])
        sender = sender or next((address for _, address in senders if address), "")
        if source == "imap":
            recipients = [address for _, address in getaddresses(
                [str(value) for value in headers.get_all("To", [])]) if address]
    parts = [sender.strip().lower(), *sorted({address.strip().lower() for address in recipients})]
    return hashlib.sha256("\n".join(parts).encode("utf-8", "replace")).hexdigest()[:32]


@dataclass(frozen=True)
class InboundMessage:
    id: str
    source: str
    mail_from: str
    rcpt_tos: list[str]
    raw: bytes
    attempts: int
    key: str = ""  # the inbox's message key (message_key of raw), when read from the inbox
    headers_trusted: bool = True  # may its Authentication-Results count (InboxMessage)
    lease_owner: str | None = None  # the worker that claimed it (`mark_processed`)

    @property
    def message_key(self) -> str:
        return self.key or message_key(self.raw)


class Processed(str):
    """A processor's outcome whose inbox row it already marked done (`mark_processed`), in the
    transaction of what it wrote last: the worker writes nothing more for it."""


async def mark_processed(session: AsyncSession, message: InboundMessage, outcome: str,
                         now_ms: int) -> Processed | None:
    """Mark the claimed message done with `outcome` in `session`'s transaction (a reply's
    receipt and its inbox row in one commit: no crash between them). None when it was not
    claimed from the inbox or its lease was lost (the worker then records it as before)."""
    if message.lease_owner is None:
        return None
    marked = await finish_in(session, InboxMessage, message.id, message.lease_owner,
                             status=DONE, outcome=outcome, processed_ms=now_ms,
                             lease_owner=None)
    return Processed(outcome) if marked else None


Processor = Callable[[InboundMessage], Awaitable[str]]
"""Processes one message; returns a short outcome for the log. Raising means: try again (for as
long as the cause is temporary, `timebot.state.retry.is_temporary`; a few times otherwise)."""


class Inbox:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], clock: Clock) -> None:
        self.sessions = sessions
        self.clock = clock
        # Called when a worker of this process has recorded processed IMAP rows (the IMAP
        # poller flags them on the server at once).
        self.processed_listeners: list[Callable[[], None]] = []

    def processed(self) -> None:
        for listener in list(self.processed_listeners):
            listener()

    async def accept(
        self, raw: bytes, mail_from: str, rcpt_tos: list[str], source: str, *,
        headers_trusted: bool = True,
    ) -> bool:
        """Commit the message; False when it was already here (a duplicate delivery).
        `headers_trusted`: False for SMTP/LMTP from outside TIMEBOT_MAIL_TRUSTED_NETWORKS."""
        values = {
            "id": uuid.uuid4().hex[:24],
            "message_key": message_key(raw),
            "source": source,
            "mail_from": mail_from,
            "rcpt_tos": rcpt_tos,
            "raw": raw,
            "headers_trusted": headers_trusted,
            "lane": inbox_lane(raw, source, mail_from, rcpt_tos),
            "received_ms": self.clock.now_ms(),
            "status": QUEUED,
            "attempts": 0,
        }
        async with unit_of_work(self.sessions) as session:
            result: Any = await session.execute(
                insert_ignoring(session, InboxMessage, ("message_key",)), values
            )
            return bool(result.rowcount)

    async def get(self, message_id: str) -> InboxMessage | None:
        async with self.sessions() as session:
            return await session.get(InboxMessage, message_id)

    async def all(self) -> list[InboxMessage]:
        async with self.sessions() as session:
            rows = await session.scalars(select(InboxMessage).order_by(InboxMessage.received_ms))
            return list(rows)


class InboxWorker(PollingWorker):
    """Claims due messages (a lease, so a crashed worker's messages are taken over) and runs
    the processor on each; several workers in several processes never share a message. A
    message that failed is due again after its backoff (`_after_failure`)."""

    interactive_work = True  # a reply, a command by mail: someone waits on its answer

    name = "inbox-worker"

    def __init__(
        self,
        inbox: Inbox,
        processor: Processor,
        *,
        lease_ms: int = 120_000,
        max_attempts: int = 5,
        poll_seconds: float = 2.0,
        batch: int = 32,
        concurrency: int = 8,
    ) -> None:
        super().__init__(poll_seconds)
        self.inbox = inbox
        self.processor = processor
        self.lease_ms = lease_ms
        self.max_attempts = max_attempts
        self.batch = batch
        self.concurrency = concurrency

    async def run_once(self) -> int:
        """Process what is claimable now; returns how many messages were handled.

        Messages of different lanes (`inbox_lane`: a sender and its recipients) are processed
        concurrently (the slow part is waiting for the service); those of one lane — a time
        entry then `submit`, the same approver deciding on the same stage — one after another
        in the order they came, across workers and processes: a claim takes only the oldest
        unfinished message of a lane."""
        clock = self.inbox.clock
        rows = await claim_records(
            self.inbox.sessions,
            InboxMessage,
            owner=self.owner,
            now_ms=clock.now_ms(),
            lease_ms=self.lease_ms,
            limit=self.batch,
            due_column=InboxMessage.next_attempt_ms,
            order_column=InboxMessage.received_ms,
            lane_column=InboxMessage.lane,
        )
        lanes: dict[str, list[Row[Any]]] = {}
        for row in rows:
            lanes.setdefault(_lane(row), []).append(row)
        slots = asyncio.Semaphore(self.concurrency)
        # The IMAP poller flags processed IMAP messages as soon as their outcome is written.
        imap = any(row.source == "imap" for row in rows)
        outcomes = FinishBatch(self.inbox.sessions, InboxMessage, self.owner, FLUSH_SECONDS,
                               on_flush=self.inbox.processed if imap else None)

        async def run_lane(lane: list[Row[Any]]) -> None:
            async with slots:
                for row in lane:
                    await self._handle(row, outcomes)

        try:
            results = await asyncio.gather(
                *(run_lane(lane) for lane in lanes.values()), return_exceptions=True
            )
        finally:  # also when cancelled (stop): what was processed is recorded
            await outcomes.flush()
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return len(rows)

    async def _handle(self, row: Row[Any], outcomes: FinishBatch) -> None:
        clock = self.inbox.clock
        message = InboundMessage(
            row.id, row.source, row.mail_from, list(row.rcpt_tos), row.raw, row.attempts,
            row.message_key, row.headers_trusted, row.lease_owner,
        )
        try:
            outcome = await self.processor(message)
        except Exception as error:  # tried again later; set aside only for a cause of its own
            await outcomes.add(row.id, **self._after_failure(row, error))
            return
        if isinstance(outcome, Processed):  # recorded with the processor's last write
            if row.source == "imap":
                self.inbox.processed()
            return
        await outcomes.add(
            row.id, status=DONE, outcome=outcome, processed_ms=clock.now_ms(), lease_owner=None
        )

    def _after_failure(self, row: Row[Any], error: Exception) -> dict[str, Any]:
        """While the cause is temporary (the service unreachable or answering 5xx, a database
        error) the message is tried again with growing delays (2 s … 5 min), for as long as it
        lasts: an outage loses no accepted mail. A cause of its own sets it aside after
        `max_attempts` such failures."""
        now = self.inbox.clock.now_ms()
        temporary = is_temporary(error)
        after = after_failure(attempts=row.attempts, failures=row.failures, temporary=temporary,
                              now_ms=now, backoff=BACKOFF, max_failures=self.max_attempts)
        if after.status == FAILED:
            log.error("inbox_message_set_aside", id=row.id, attempts=row.attempts,
                      failures=after.failures, reason=f"{type(error).__name__}: {error}",
                      exc_info=error)
        elif temporary:
            log.warning("inbox_processing_deferred", id=row.id, attempts=row.attempts,
                        reason=f"{type(error).__name__}: {error}",
                        retry_in_ms=after.next_attempt_ms - now)
        else:
            log.exception("inbox_processing_failed", id=row.id, attempts=row.attempts,
                          failures=after.failures, retry_in_ms=after.next_attempt_ms - now,
                          exc_info=error)
        return {"status": after.status, "outcome": f"error: {error}",
                "next_attempt_ms": after.next_attempt_ms, "failures": after.failures,
                "lease_owner": None}


def _lane(row: Row[Any]) -> str:
    """Messages of one lane are processed in order (`inbox_lane`); rows stored without one, by
    envelope recipients, and IMAP messages then share one."""
    if row.lane:
        return str(row.lane)
    if row.source == "imap" or not row.rcpt_tos:
        return f"source:{row.source}"
    return "rcpt:" + ",".join(sorted(str(address).lower() for address in row.rcpt_tos))
