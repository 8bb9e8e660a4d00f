"""Outbound mail: a durable outbox table, and a worker that hands each message to the relay
(aiosmtplib: STARTTLS, SMTPS, AUTH) or, without a relay, to the local Maildir outbox.

A relay outage loses nothing: a temporary failure (no connection, a 4xx) is retried with
exponential backoff capped at an hour, for as long as it lasts (a message that keeps failing
counts as "stuck" in /metrics), and when the relay takes a message again the waiting ones go
at once (their backoff is reset). A permanent refusal (a 5xx at MAIL FROM, RCPT or DATA: a
wrong address, a message the relay will never take) ends the message: `failed`, with the
relay's answer as its reason, logged and counted in /metrics (`timebot outbox failed` lists
them). A message that fails for a reason of its own (its delivery raised something else) is
retried a few times, then set aside the same way. A message is never sent twice by two
processes (claimed with a short lease that a heartbeat renews while the worker holds it, so a
killed worker's rows are taken over within seconds). A scheduled message may carry a
`dedupe_key` so that it is enqueued once however many processes schedule it.

After a crash a row may be delivered again: the Maildir outbox names each file after its row,
so a second attempt finds the first and writes nothing; the relay records each attempt before
its SMTP exchange and the row as sent right after it, so only that exchange can repeat.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import Any, Protocol

import structlog
from sqlalchemy import Row, bindparam, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from mail.queues.maildir_outbox import MaildirOutbox
from mail.queues.mime_writer import outgoing_message
from mail.queues.outbox_batch import BATCH_ROWS, RowBatch, closed, current_batch, opened
from mail.queues.relay import DeliveryError, RelaySettings, SmtpRelay, relay_failure
from plumbing.clock import Clock
from plumbing.urgency import yield_to_people
from timebot.state.db import insert_ignoring, unit_of_work
from timebot.state.group_finish import GroupedFinish
from timebot.state.heartbeat import LEASE_MS, LeaseHeartbeat
from timebot.state.lanes import BULK, priority_of
from timebot.state.models import OutboxMessage
from timebot.state.queue import DONE, FAILED, QUEUED, FinishBatch, claim_records, finish_row
from timebot.state.retry import AfterFailure, Backoff, after_failure, is_temporary
from timebot.state.worker import PollingWorker
from timebot.telemetry.queue_metrics import OUTBOX_FAILED_TOTAL

log = structlog.get_logger("mail.outbound")

__all__ = [  # the deliverers are here too for those that know the outbox by this module
    "DeliveryError", "MaildirOutbox", "RelaySettings", "SmtpRelay", "relay_failure",
]

FIRST_RETRY_MS = 30_000
MAX_RETRY_MS = 3_600_000
BACKOFF = Backoff(FIRST_RETRY_MS, MAX_RETRY_MS)
MAX_OWN_FAILURES = 5
"""A message whose delivery fails this often for a reason of its own is set aside."""


def retry_delay_ms(attempts: int) -> int:
    """After the `attempts`-th failed attempt: 30 s, 1, 2, 4, 8… minutes, at most an hour."""
    return BACKOFF.delay_ms(attempts)


BULK_KINDS = frozenset({"review", "approval-reminder", "timesheet-reminder", "digest", "report"})
"""Mail to many (fan-outs, reminder runs, digests, reports): claimed after what a person who
just acted waits for (receipts and refusals, owners' notices, account mail: timebot.state.lanes)."""

FLUSH_SECONDS = 1.0  # delivered rows are marked done at least this often (OutboxWorker)


class Deliverer(Protocol):
    """Hands a message on. `key` names the outbox row: a deliverer that is `idempotent`
    writes a key once however often it is asked (its rows may be marked done in batches); one
    that is not has each attempt recorded before it and each success right after it."""

    idempotent: bool

    async def deliver(
        self, raw: bytes, envelope_from: str, rcpt_tos: list[str], *, key: str
    ) -> None: ...


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

    Written straight to bytes (mail.queues.mime_writer): an `OutgoingMessage`, whose `as_bytes()`
    and header getters need no parsing (any other use of it as an EmailMessage parses it first)."""
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
            "priority": priority_of(kind in BULK_KINDS),
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
        batch = current_batch(self)
        if batch is not None:  # held back, written with the batch (True: its key decides then)
            await batch.add(values)
            return True
        async with unit_of_work(self.sessions) as own_session:
            return await _insert(own_session, values)

    @asynccontextmanager
    async def batched(self, written: Callable[[], None] | None = None,
                      rows: int = BATCH_ROWS) -> AsyncIterator[RowBatch]:
        """Within it, this task's `enqueue` without a session holds its mail back and writes
        it with the next ones, `rows` a transaction (mail.queues.outbox_batch); the rest at
        its end. `written`: called after each batch (the worker woken)."""
        batch = RowBatch(self, self.sessions, _insert_many, rows, written)
        token = opened(batch)
        try:
            yield batch
        finally:
            closed(token)
            await batch.flush()

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


async def _insert_many(session: AsyncSession, rows: list[dict[str, Any]]) -> None:
    """`_insert` of each row, the rows of each kind (with a dedupe key or without) in one
    executemany: one round trip a batch, not one a mail."""
    keyed = [values for values in rows if values.get("dedupe_key") is not None]
    unkeyed = [values for values in rows if values.get("dedupe_key") is None]
    for group, conflict in ((keyed, ("dedupe_key",)), (unkeyed, ())):
        if group:
            await session.execute(insert_ignoring(session, OutboxMessage, conflict), group)


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
        lease_ms: int = LEASE_MS,
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
        # Set when this worker left a message waiting out a temporary failure: its next
        # delivery that goes through resumes the waiting ones (as does one of a message
        # that had failed, whichever worker recorded that).
        self.waiting_on_failures = False

    express = True  # receipts, refusals, owners' notices: claimed beside a batch of bulk mail

    async def run_once(self) -> int:
        return await self._deliver_due(express=False)

    async def run_express(self) -> int:
        """`run_once` for the interactive messages only (timebot.state.worker's express loop)."""
        return await self._deliver_due(express=True)

    async def _deliver_due(self, *, express: bool) -> int:
        """Deliver what is due, up to `concurrency` messages at a time (each Maildir delivery
        waits for its write; each relay delivery for its SMTP exchange), renewing the rows'
        leases while it holds them. Maildir deliveries (idempotent) are marked done
        together, each with its own delivery time: at the end of the batch, and after
        FLUSH_SECONDS of deliveries; a process that dies in between has them taken over and
        finds each file written. A relay delivery is recorded as attempted by the claim
        (`attempted_ms`), made only while this worker's lease surely holds, and recorded as
        sent right after it (`GroupedFinish`: with the others sent meanwhile, in one
        transaction). A failed delivery is recorded at once (`_failed`): retried after
        `retry_delay_ms`, or ended."""
        clock = self.outbox.clock
        sessions = self.outbox.sessions
        idempotent = self.deliverer.idempotent
        now_ms = clock.now_ms()
        rows = await claim_records(
            sessions,
            OutboxMessage,
            owner=self.owner,
            now_ms=now_ms,
            lease_ms=self.lease_ms,
            limit=self.batch,
            due_column=OutboxMessage.next_attempt_ms,
            order_column=OutboxMessage.next_attempt_ms,
            priority_column=OutboxMessage.priority,
            claimed_at_column=None if idempotent else OutboxMessage.attempted_ms,
            express=express,
        )
        if not rows:
            return 0
        delivered = FinishBatch(sessions, OutboxMessage, self.owner, FLUSH_SECONDS)
        sent = GroupedFinish(sessions, OutboxMessage, self.owner)
        heartbeat = LeaseHeartbeat(sessions, OutboxMessage, self.owner, clock, self.lease_ms,
                                   held_until_ms=now_ms + self.lease_ms)
        slots = asyncio.Semaphore(self.concurrency)
        # A delivery went through after earlier failures, and none failed for now in this
        # batch: the relay answers again, the rows waiting out a backoff are resumed.
        failing_before = self.waiting_on_failures
        resumed = [False]
        failed_for_now = [False]  # in this batch

        async def deliver(row: Row[Any]) -> None:
            async with slots:
                if row.priority == BULK:
                    await yield_to_people()
                if not idempotent and row.attempts > 1:
                    log.info("mail_delivery_repeated", id=row.id, attempts=row.attempts)
                if not idempotent and not heartbeat.holds():
                    return  # the lease may have passed: another worker may hold it now
                try:
                    await self.deliverer.deliver(
                        row.raw, row.envelope_from, list(row.rcpt_tos), key=row.id)
                except Exception as error:  # each row fails on its own
                    failed_for_now[0] |= await self._failed(row, error)
                    return
                if failing_before or row.last_error is not None:
                    resumed[0] = True
                done = {"status": DONE, "sent_ms": clock.now_ms(), "lease_owner": None,
                        "last_error": None}
                if idempotent:
                    await delivered.add(row.id, **done)
                else:
                    await sent.add(row.id, **done)

        async with heartbeat:
            try:
                results = await asyncio.gather(*(deliver(row) for row in rows),
                                               return_exceptions=True)
            finally:  # also when cancelled (stop) or recording an outcome failed
                await delivered.flush()
        if resumed[0] and not failed_for_now[0]:
            await self._resume_waiting()
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return len(rows)

    async def stop(self) -> None:
        await super().stop()
        close = getattr(self.deliverer, "close", None)
        if close is not None:  # the relay's open sessions
            await close()

    async def _failed(self, row: Row[Any], error: Exception) -> bool:
        """Record a failed delivery: a temporary one is tried again after its backoff (for
        as long as it lasts); a permanent refusal ends the message; another error (the
        message's own) is tried again a few times, then ends it too. True when it failed
        for now (the relay's state, not the message's)."""
        now = self.outbox.clock.now_ms()
        if isinstance(error, DeliveryError):
            temporary = not error.permanent
            reason = str(error)
        else:
            temporary = is_temporary(error)
            reason = f"{type(error).__name__}: {error}"
        if isinstance(error, DeliveryError) and error.permanent:
            outcome = AfterFailure(FAILED, now, row.failures)
        else:
            outcome = after_failure(attempts=row.attempts, failures=row.failures,
                                    temporary=temporary, now_ms=now, backoff=BACKOFF,
                                    max_failures=MAX_OWN_FAILURES)
        if outcome.status == FAILED:
            OUTBOX_FAILED_TOTAL.inc()
            log.error("mail_delivery_failed_for_good", id=row.id, kind=row.kind,
                      to=list(row.rcpt_tos), subject=row.subject, reason=reason,
                      attempts=row.attempts)
        else:
            if temporary:
                self.waiting_on_failures = True
            log.warning("mail_delivery_failed", id=row.id, error=reason, temporary=temporary,
                        attempts=row.attempts, retry_in_ms=outcome.next_attempt_ms - now,
                        exc_info=not isinstance(error, DeliveryError))
        await finish_row(
            self.outbox.sessions, OutboxMessage, row.id, self.owner,
            status=outcome.status, last_error=reason, next_attempt_ms=outcome.next_attempt_ms,
            failures=outcome.failures, lease_owner=None,
        )
        return outcome.status != FAILED and temporary

    async def _resume_waiting(self) -> None:
        """The relay took a message after failures: the messages waiting out a temporary
        failure's backoff are due now (not up to an hour later). Only on that path: a
        delivery after deliveries costs nothing more."""
        self.waiting_on_failures = False
        now = self.outbox.clock.now_ms()
        async with unit_of_work(self.outbox.sessions) as session:
            result: Any = await session.execute(_RESUME, {"now": now})
        if result.rowcount:
            log.info("mail_delivery_resumed", waiting=result.rowcount)
            self.wake()


_table: Any = OutboxMessage.__table__
_RESUME = (
    update(_table)
    .where(_table.c.status == QUEUED, _table.c.next_attempt_ms > bindparam("now"),
           _table.c.last_error.is_not(None), _table.c.failures == 0)
    .values(next_attempt_ms=bindparam("now"))
)
