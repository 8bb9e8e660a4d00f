"""One sender's mails to one address are processed in the order they came, whichever worker or
process claims them (README's walkthrough: Dorothy's `4h …` then `submit`, sent back to back,
met four inbox workers); a message failing for its own reason never holds the ones behind it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import delete, select, text

from mail.queues import inbox as inbox_module
from mail.queues.inbox import InboundMessage, Inbox, InboxWorker, inbox_lane
from plumbing.clock import Clock
from tests.protocol.conftest import StateDB
from timebot.errors import ServiceUnavailable
from timebot.state.models import InboxMessage
from timebot.state.queue import LANE_HOLD_ATTEMPTS, claim_records

NOW = 1_800_000_000_000
TIME = "time@timebot.example"


@pytest.fixture
async def inbox(state_db: StateDB) -> AsyncIterator[Inbox]:
    async with state_db.sessions() as session:
        await session.execute(delete(InboxMessage))
        await session.commit()
    yield Inbox(state_db.sessions, Clock(frozen_ms=NOW))


async def accept(inbox: Inbox, subject: str, sender: str = "dorothy@example.com",
                 rcpt: str = TIME) -> None:
    raw = (f"Message-ID: <{subject}.{sender}@example.com>\r\nFrom: {sender}\r\nTo: {rcpt}\r\n"
           f"Subject: {subject}\r\n\r\nx\r\n").encode()
    assert await inbox.accept(raw, sender, [rcpt], "smtp")
    inbox.clock.advance(1)


def subject_of(message: InboundMessage) -> str:
    return message.raw.split(b"Subject: ")[1].split(b"\r\n")[0].decode()


class Recorder:
    """A processor that records what it processed, and can hold one subject until released."""

    def __init__(self, hold: str = "") -> None:
        self.done: list[str] = []
        self.hold = hold
        self.holding = asyncio.Event()
        self.release = asyncio.Event()

    async def __call__(self, message: InboundMessage) -> str:
        subject = subject_of(message)
        if subject == self.hold:
            self.holding.set()
            await self.release.wait()
        self.done.append(subject)
        return "ok"


async def test_a_second_worker_leaves_a_lane_whose_older_message_is_being_processed(
    inbox: Inbox,
) -> None:
    await accept(inbox, "log")
    first = Recorder(hold="log")
    worker = InboxWorker(inbox, first)
    busy = asyncio.create_task(worker.run_once())
    await first.holding.wait()
    await accept(inbox, "submit")  # Dorothy's second mail, while the first is processed
    await accept(inbox, "other", sender="linus@example.com")

    second = Recorder()
    assert await InboxWorker(inbox, second).run_once() == 1
    assert second.done == ["other"]  # not Dorothy's submit: her time entry is not done yet

    first.release.set()
    assert await busy == 1
    assert await InboxWorker(inbox, second).run_once() == 1
    assert second.done == ["other", "submit"]
    assert {row.status for row in await inbox.all()} == {"done"}


async def test_one_worker_takes_a_lane_whole_and_processes_it_in_order(inbox: Inbox) -> None:
    for subject in ("a1", "b1", "a2", "b2", "a3"):
        await accept(inbox, subject, sender=f"{subject[0]}@example.com")
    recorder = Recorder()
    assert await InboxWorker(inbox, recorder).run_once() == 5
    assert [s for s in recorder.done if s[0] == "a"] == ["a1", "a2", "a3"]
    assert [s for s in recorder.done if s[0] == "b"] == ["b1", "b2"]


async def test_a_claim_waits_for_a_concurrent_claim_of_the_same_lane(
    inbox: Inbox, state_db: StateDB
) -> None:
    """Two claims at once on PostgreSQL: the second must not pass over the older message as
    locked and take the younger one (claims of a laned table are serialised)."""
    await accept(inbox, "log")
    await accept(inbox, "submit")
    async with state_db.sessions() as held:
        # Another process's claim, in flight: it took `log` and has not committed yet.
        await held.begin()
        if state_db.backend == "postgresql":
            await held.execute(text("SELECT pg_advisory_xact_lock(hashtext('inbox_messages'))"))
        log_row = (await held.execute(
            select(InboxMessage).order_by(InboxMessage.received_ms).limit(1)
            .with_for_update())).scalar_one()
        log_row.status, log_row.lease_owner = "working", "elsewhere"
        log_row.lease_until_ms, log_row.attempts = NOW + 60_000, 1
        await held.flush()
        claim = asyncio.create_task(claim_records(
            state_db.sessions, InboxMessage, owner="second", now_ms=inbox.clock.now_ms(),
            lease_ms=60_000, limit=10, due_column=InboxMessage.next_attempt_ms,
            order_column=InboxMessage.received_ms, lane_column=InboxMessage.lane))
        await asyncio.sleep(0.2)
        await held.commit()
    assert await claim == []


async def test_a_message_failing_for_its_own_reason_does_not_hold_its_lane(inbox: Inbox) -> None:
    await accept(inbox, "broken")
    processed: list[str] = []

    async def process(message: InboundMessage) -> str:
        if subject_of(message) == "broken":
            raise RuntimeError("cannot be read")
        processed.append(subject_of(message))
        return "ok"

    worker = InboxWorker(inbox, process, max_attempts=3)
    assert await worker.run_once() == 1  # `broken` fails: tried again after a delay
    await accept(inbox, "fine")
    assert await worker.run_once() == 1
    assert processed == ["fine"]


async def test_a_temporary_failure_holds_the_lane_until_it_went_through(inbox: Inbox) -> None:
    await accept(inbox, "log")
    outage = True
    processed: list[str] = []

    async def process(message: InboundMessage) -> str:
        if outage:
            raise ServiceUnavailable("the service is down")
        processed.append(subject_of(message))
        return "ok"

    worker = InboxWorker(inbox, process)
    assert await worker.run_once() == 1  # `log` waits out its retry delay
    await accept(inbox, "submit")
    outage = False
    assert await worker.run_once() == 0  # `submit` waits behind it
    inbox.clock.advance(inbox_module.BACKOFF.delay_ms(1))
    assert await worker.run_once() == 2
    assert processed == ["log", "submit"]


async def test_a_message_that_kills_its_worker_holds_its_lane_only_so_long(
    inbox: Inbox, state_db: StateDB
) -> None:
    async def claim(owner: str) -> list[str]:
        claimed = await claim_records(
            state_db.sessions, InboxMessage, owner=owner, now_ms=inbox.clock.now_ms(),
            lease_ms=1_000, limit=10, due_column=InboxMessage.next_attempt_ms,
            order_column=InboxMessage.received_ms, lane_column=InboxMessage.lane)
        inbox.clock.advance(1_001)  # the worker dies (SIGKILL): its lease runs out
        return [subject_of_row(row) for row in claimed]

    await accept(inbox, "poison")
    assert await claim("dead1") == ["poison"]
    await accept(inbox, "next")
    for attempt in range(2, LANE_HOLD_ATTEMPTS + 1):
        assert await claim(f"dead{attempt}") == ["poison"]
    assert await claim("alive") == ["poison", "next"]


def subject_of_row(row: object) -> str:
    raw: bytes = row.raw
    return raw.split(b"Subject: ")[1].split(b"\r\n")[0].decode()


def test_the_lane_is_the_sender_and_the_recipients() -> None:
    raw = b"From: Dorothy <Dorothy@Example.com>\r\nTo: time@t.example\r\n\r\nx\r\n"
    smtp = inbox_lane(raw, "smtp", "dorothy@example.com", [TIME])
    assert smtp == inbox_lane(raw, "smtp", "DOROTHY@example.com", [TIME.upper()])
    assert smtp != inbox_lane(raw, "smtp", "linus@example.com", [TIME])
    assert smtp != inbox_lane(raw, "smtp", "dorothy@example.com", ["approvals+x@t.example"])
    # Over IMAP, the headers: Dorothy's two mails share a lane, Linus's has another.
    imap = inbox_lane(raw, "imap", "", ["mailbox-user"])
    assert imap == inbox_lane(raw.replace(b"x\r\n", b"y\r\n"), "imap", "", ["mailbox-user"])
    assert imap != inbox_lane(raw.replace(b"Dorothy@", b"linus@"), "imap", "", ["mailbox-user"])
