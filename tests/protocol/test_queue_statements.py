"""How many SQL statements and transactions the durable queues' cycles cost (issue #18), pinned
on SQLite and PostgreSQL so that a round trip added to these paths is a decision: accepting a
message (inbox, outbox, event store) and a worker's pass over a batch of them (one claim, one
write of the outcomes)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import delete

from mail.queues.inbox import InboundMessage, Inbox, InboxWorker
from mail.queues.outbox import MaildirOutbox, Outbox, OutboxWorker, new_message
from plumbing.clock import Clock
from tests.protocol.conftest import StateDB
from tests.statement_counter import Statements, statements
from timebot.events.bus import EventBus, EventStore, EventWorker, ServiceEvent
from timebot.state.models import InboxMessage, OutboxMessage, ReceivedEvent

BATCH = 4


@pytest.fixture
async def count(state_db: StateDB
                ) -> AsyncIterator[Callable[[Awaitable[Any]], Awaitable[Statements]]]:
    async with state_db.sessions() as session:
        for model in (InboxMessage, OutboxMessage, ReceivedEvent):
            await session.execute(delete(model))
        await session.commit()

    async def counted(work: Awaitable[Any]) -> Statements:
        async with statements([state_db.engine]) as seen:
            await work
        return seen

    yield counted


def raw(number: int) -> bytes:
    return f"Message-ID: <{uuid.uuid4().hex}.{number}@example.com>\r\n\r\nx\r\n".encode()


async def test_inbox_accept_and_a_batch(
    state_db: StateDB, count: Callable[[Awaitable[Any]], Awaitable[Statements]]
) -> None:
    inbox = Inbox(state_db.sessions, Clock())
    accepted = await count(inbox.accept(raw(0), "a@example.com", ["b@example.com"], "smtp"))
    assert (len(accepted.lines(60)), accepted.commits) == (1, 1), accepted.lines(60)
    for number in range(1, BATCH):
        await inbox.accept(raw(number), "a@example.com", [f"b{number}@example.com"], "smtp")

    async def process(message: InboundMessage) -> str:
        return "ok"

    worker = InboxWorker(inbox, process)
    handled = await count(worker.run_once())
    # the claim (one UPDATE … RETURNING; on PostgreSQL after the lock that serialises claims of
    # a laned table) and the outcomes (one executemany)
    claim = 2 if state_db.backend == "postgresql" else 1
    assert (len(handled.lines(60)), handled.commits) == (claim + 1, 2), handled.lines(60)
    assert {row.status for row in await inbox.all()} == {"done"}


async def test_outbox_enqueue_and_a_batch(
    state_db: StateDB, count: Callable[[Awaitable[Any]], Awaitable[Statements]], tmp_path: Path
) -> None:
    outbox = Outbox(state_db.sessions, Clock())
    message = new_message(mail_from="a@example.com", to="b@example.com", subject="s",
                          text="t", mail_domain="example.com")
    queued = await count(outbox.enqueue(message, kind="receipt", envelope_from="",
                                        dedupe_key="k0"))
    assert (len(queued.lines(60)), queued.commits) == (1, 1), queued.lines(60)
    for number in range(1, BATCH):
        await outbox.enqueue(message, kind="receipt", envelope_from="", dedupe_key=f"k{number}")
    worker = OutboxWorker(outbox, MaildirOutbox(tmp_path / "outbox"))
    delivered = await count(worker.run_once())
    assert (len(delivered.lines(60)), delivered.commits) == (2, 2), delivered.lines(60)
    assert {row.status for row in await outbox.messages()} == {"done"}


async def test_event_store_batch_and_dispatch(
    state_db: StateDB, count: Callable[[Awaitable[Any]], Awaitable[Statements]]
) -> None:
    store = EventStore(state_db.sessions, Clock())
    events = [ServiceEvent(uuid.uuid4().hex, "approvalEventUpdate", "o", 1, {"n": number})
              for number in range(BATCH)]
    stored = await count(store.accept_many(events))
    assert (len(stored.lines(60)), stored.commits) == (1, 1), stored.lines(60)
    assert await store.accept_many(events[:2]) == 0  # received before: skipped
    seen: list[ServiceEvent] = []

    async def subscriber(service_event: ServiceEvent) -> None:
        seen.append(service_event)

    bus = EventBus()
    bus.subscribe("test", subscriber, ("approvalEventUpdate",))
    dispatched = await count(EventWorker(store, bus).run_once())
    assert (len(dispatched.lines(60)), dispatched.commits) == (2, 2), dispatched.lines(60)
    assert sorted(item.data["n"] for item in seen) == list(range(BATCH))
    assert {row.status for row in await store.all()} == {"done"}


async def test_a_bulk_run_writes_its_mail_in_batches_and_lets_a_writer_in_between(
    state_db: StateDB, count: Callable[[Awaitable[Any]], Awaitable[Statements]]
) -> None:
    """Issue #40: within `Outbox.batched`, 45 reminders are written in 3 transactions (20, 20,
    5) instead of 45, each batch one executemany; a receipt queued while the run goes on is
    written between two batches, not after the run; a key queued before is refused at the
    write, as without a batch."""
    outbox = Outbox(state_db.sessions, Clock())
    message = new_message(mail_from="a@example.com", to="b@example.com", subject="s",
                          text="t", mail_domain="example.com")
    await outbox.enqueue(message, kind="timesheet-reminder", envelope_from="", dedupe_key="r3")
    order: list[str] = []
    receipts: list[asyncio.Task[bool]] = []

    def written() -> None:
        order.append("batch")
        if not receipts:  # a person acts while the run goes on
            receipts.append(asyncio.create_task(receipt()))

    async def receipt() -> bool:
        queued = await outbox.enqueue(message, kind="receipt", envelope_from="",
                                      dedupe_key="receipt")
        order.append("receipt")
        return queued

    async def run() -> None:
        async with outbox.batched(written, rows=20):
            for number in range(45):
                await outbox.enqueue(message, kind="timesheet-reminder", envelope_from="",
                                     dedupe_key=f"r{number}")

    done = await count(run())
    # The batches' 3 and the receipt's own (it is not held back with the run's mail: the
    # receipt's task was started by the run's, and inherited its context, not its batch).
    assert done.commits == 4, done.lines(60)
    # One INSERT a transaction (a batch's is an executemany: one round trip; 45 before).
    inserts = [sql for sql in done.lines(60) if sql.startswith("INSERT INTO outbox_messages")]
    assert len(inserts) == done.commits, done.lines(60)
    assert await receipts[0]
    assert order == ["batch", "receipt", "batch", "batch"]
    keys = [row.dedupe_key for row in await outbox.messages("timesheet-reminder")]
    assert sorted(keys) == sorted(f"r{number}" for number in range(45))  # r3 once
