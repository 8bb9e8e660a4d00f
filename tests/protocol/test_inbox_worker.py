"""The inbox worker on SQLite and PostgreSQL: what each message came to is recorded (together,
at the end of a batch or while it goes on), only for messages the worker still holds, also
when it is stopped mid-batch."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import delete, update
from sqlalchemy.exc import OperationalError

from mail.queues import inbox as inbox_module
from mail.queues.inbox import InboundMessage, Inbox, InboxWorker
from plumbing.clock import Clock
from tests.protocol.conftest import StateDB
from timebot.errors import ServiceUnavailable
from timebot.state.models import InboxMessage

NOW = 1_800_000_000_000


@pytest.fixture
async def inbox(state_db: StateDB) -> AsyncIterator[Inbox]:
    async with state_db.sessions() as session:
        await session.execute(delete(InboxMessage))
        await session.commit()
    yield Inbox(state_db.sessions, Clock(frozen_ms=NOW))


async def accept(inbox: Inbox, number: int, rcpt: str = "approvals+a@example.com") -> None:
    raw = f"Message-ID: <m{number}@example.com>\r\nSubject: {number}\r\n\r\nx\r\n".encode()
    assert await inbox.accept(raw, "a@example.com", [rcpt], "smtp")
    inbox.clock.advance(1)


def subject(message: InboundMessage) -> int:
    return int(message.raw.split(b"Subject: ")[1].split(b"\r\n")[0])


async def outcomes(inbox: Inbox) -> dict[int, tuple[str, str | None, str | None]]:
    return {
        int(row.raw.split(b"Subject: ")[1].split(b"\r\n")[0]):
        (row.status, row.outcome, row.lease_owner)
        for row in await inbox.all()
    }


async def test_each_message_gets_its_outcome(inbox: Inbox) -> None:
    for number in range(4):
        await accept(inbox, number, f"approvals+{number % 2}@example.com")

    async def process(message: InboundMessage) -> str:
        if subject(message) == 2:
            raise RuntimeError("service down")
        return f"did {subject(message)}"

    worker = InboxWorker(inbox, process, max_attempts=2)
    assert await worker.run_once() == 4
    assert await outcomes(inbox) == {
        0: ("done", "did 0", None), 1: ("done", "did 1", None),
        2: ("queued", "error: service down", None), 3: ("done", "did 3", None),
    }
    assert {row.processed_ms for row in await inbox.all() if row.status == "done"} == {NOW + 4}
    assert await worker.run_once() == 0  # not due before its backoff
    inbox.clock.advance(inbox_module.BACKOFF.delay_ms(1))
    assert await worker.run_once() == 1  # attempt 2 of 2: set aside
    assert (await outcomes(inbox))[2] == ("failed", "error: service down", None)
    assert await worker.run_once() == 0


async def test_a_message_taken_over_by_another_worker_is_left_to_it(
    inbox: Inbox, state_db: StateDB
) -> None:
    for number in range(3):
        await accept(inbox, number)

    async def process(message: InboundMessage) -> str:
        if subject(message) == 2:  # meanwhile the first one's lease went to another worker
            async with state_db.sessions() as session:
                first = (await inbox.all())[0]
                await session.execute(update(InboxMessage).where(InboxMessage.id == first.id)
                                      .values(lease_owner="other"))
                await session.commit()
        return "ok"

    await InboxWorker(inbox, process).run_once()
    assert await outcomes(inbox) == {
        0: ("working", None, "other"), 1: ("done", "ok", None), 2: ("done", "ok", None),
    }


async def test_stopping_mid_batch_records_what_was_processed(inbox: Inbox) -> None:
    for number in range(3):
        await accept(inbox, number)
    third = asyncio.Event()

    async def process(message: InboundMessage) -> str:
        if subject(message) == 2:
            third.set()
            await asyncio.Event().wait()
        return "ok"

    worker = InboxWorker(inbox, process)
    task = asyncio.create_task(worker.run_once())
    await asyncio.wait_for(third.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await outcomes(inbox) == {
        0: ("done", "ok", None), 1: ("done", "ok", None), 2: ("working", None, worker.owner),
    }


async def test_outcomes_are_recorded_while_a_batch_goes_on(
    inbox: Inbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inbox_module, "FLUSH_SECONDS", 0.0)
    for number in range(3):
        await accept(inbox, number)  # one lane: one after another
    seen: list[list[str]] = []

    async def process(message: InboundMessage) -> str:
        seen.append([status for status, _, _ in (await outcomes(inbox)).values()])
        return "ok"

    await InboxWorker(inbox, process).run_once()
    assert seen == [["working"] * 3, ["done", "working", "working"],
                    ["done", "done", "working"]]


async def test_a_temporary_failure_is_retried_for_as_long_as_it_lasts(inbox: Inbox) -> None:
    """The service unreachable, its database refusing: tried again after 2 s, 4 s … 5 min,
    never set aside however long it lasts; the messages of other senders go meanwhile. A
    failure of the message's own sets it aside after `max_attempts` of them."""
    for number, rcpt in ((0, "a"), (1, "b"), (2, "c")):
        await accept(inbox, number, f"approvals+{rcpt}@example.com")
    outage = [12]
    causes: list[Exception] = [
        ServiceUnavailable("cannot reach the service"),
        OperationalError("SELECT 1", {}, ConnectionRefusedError("refused")),
    ]

    async def process(message: InboundMessage) -> str:
        if subject(message) == 0 and outage[0] > 0:
            outage[0] -= 1
            raise causes[outage[0] % 2]
        if subject(message) == 2:
            raise ValueError("a message no handler can read")
        return "ok"

    worker = InboxWorker(inbox, process, max_attempts=3)
    delays = []
    for _ in range(12):
        await worker.run_once()
        [first] = [row for row in await inbox.all() if b"Subject: 0" in row.raw]
        assert (first.status, first.failures) == ("queued", 0)
        delays.append(first.next_attempt_ms - inbox.clock.now_ms())
        inbox.clock.advance(inbox_module.BACKOFF.max_ms)
    assert delays[:4] == [2_000, 4_000, 8_000, 16_000] and delays[-1] == 300_000
    await worker.run_once()
    found = await outcomes(inbox)
    assert found[0] == ("done", "ok", None) and found[1] == ("done", "ok", None)
    assert found[2] == ("failed", "error: a message no handler can read", None)
    [bad] = [row for row in await inbox.all() if b"Subject: 2" in row.raw]
    assert (bad.failures, bad.attempts) == (3, 3)
