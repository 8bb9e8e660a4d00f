"""The outbox's SMTP sessions to a real relay on loopback kept open between messages
(mail.queues.relay_sessions), and what a relay delivery writes: one claim for the batch, and
each message's "sent" committed right after its exchange, with those sent meanwhile."""

from __future__ import annotations

import asyncio
from email import message_from_bytes
from typing import Any

from aiosmtpd.smtp import SMTP, Envelope, Session

from mail.queues.outbox import Outbox, OutboxWorker, RelaySettings, SmtpRelay, new_message
from mail.queues.relay_sessions import RelaySessions
from tests.net import free_port
from tests.protocol.conftest import StateDB
from tests.statement_counter import statements

DOMAIN = "timebot.localhost"


class CountingRelay:
    """A real SMTP server that keeps every message and counts the sessions and their QUITs;
    answers 451 to the messages whose subject is in `refuse` (once each)."""

    def __init__(self, refuse: tuple[str, ...] = ()) -> None:
        self.received: list[bytes] = []
        self.sessions: list[Any] = []
        self.quits = 0
        self.refuse = set(refuse)

    def server(self) -> SMTP:
        relay = self

        class Counting(SMTP):
            def connection_made(self, transport: Any) -> None:
                relay.sessions.append(transport)
                super().connection_made(transport)

            async def smtp_QUIT(self, arg: str) -> None:
                relay.quits += 1
                await super().smtp_QUIT(arg)

        return Counting(self)

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        raw = bytes(envelope.original_content or b"")
        subject = str(message_from_bytes(raw)["Subject"])
        if subject in self.refuse:
            self.refuse.discard(subject)
            return "451 4.3.0 Try again later"
        self.received.append(raw)
        return "250 OK"

    def subjects(self) -> list[str]:
        return sorted(str(message_from_bytes(raw)["Subject"]) for raw in self.received)


async def until(condition: Any, seconds: float = 10.0) -> None:
    for _ in range(int(seconds / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the condition did not come true")


async def serve(relay: CountingRelay) -> tuple[Any, int]:
    port = free_port()
    server = await asyncio.get_running_loop().create_server(relay.server, "127.0.0.1", port)
    return server, port


async def enqueue(outbox: Outbox, count: int, start: int = 0) -> None:
    for number in range(start, start + count):
        await outbox.enqueue(new_message(
            mail_from=f"timebot@{DOMAIN}", to=f"p{number}@example.com",
            subject=f"Review {number}", text=f"Body {number}", html=f"<p>{number}</p>",
            mail_domain=DOMAIN), kind="review", envelope_from="")


async def drain(worker: OutboxWorker, outbox: Outbox, rounds: int = 10) -> None:
    for _ in range(rounds):
        while await worker.run_once():
            pass
        outbox.clock.advance(3_600_000)  # past any retry's backoff


async def test_messages_go_over_a_few_open_sessions_each_once(outbox: Outbox) -> None:
    relay = CountingRelay()
    server, port = await serve(relay)
    deliverer = SmtpRelay(RelaySettings.parse(f"127.0.0.1:{port}"))
    worker = OutboxWorker(outbox, deliverer, batch=10, concurrency=3)
    try:
        await enqueue(outbox, 40)
        await drain(worker, outbox, rounds=1)
        await worker.stop()
    finally:
        server.close()
    assert relay.subjects() == sorted(f"Review {n}" for n in range(40))
    assert {row.status for row in await outbox.messages()} == {"done"}
    # Three at a time: at most three sessions, each ended with QUIT when the worker stopped.
    assert 1 <= len(relay.sessions) <= 3
    assert deliverer.sessions.opened == len(relay.sessions)
    assert deliverer.sessions.reused == 40 - len(relay.sessions)
    assert relay.quits == len(relay.sessions)


async def test_a_session_the_relay_dropped_is_replaced_and_nothing_is_lost(
    outbox: Outbox
) -> None:
    relay = CountingRelay()
    server, port = await serve(relay)
    deliverer = SmtpRelay(RelaySettings.parse(f"127.0.0.1:{port}"))
    worker = OutboxWorker(outbox, deliverer, concurrency=1)
    try:
        await enqueue(outbox, 2)
        await drain(worker, outbox, rounds=1)
        for transport in relay.sessions:  # the relay's idle timeout, or a restart
            transport.close()
        await enqueue(outbox, 2, start=2)
        await drain(worker, outbox, rounds=1)
        await worker.stop()
    finally:
        server.close()
    assert relay.subjects() == [f"Review {n}" for n in range(4)]
    assert {row.status for row in await outbox.messages()} == {"done"}
    assert len(relay.sessions) == 2


async def test_a_refused_message_leaves_its_session_and_is_sent_once_later(
    outbox: Outbox
) -> None:
    relay = CountingRelay(refuse=("Review 1",))
    server, port = await serve(relay)
    deliverer = SmtpRelay(RelaySettings.parse(f"127.0.0.1:{port}"))
    worker = OutboxWorker(outbox, deliverer, concurrency=1)
    try:
        await enqueue(outbox, 3)
        await drain(worker, outbox, rounds=3)
        await worker.stop()
    finally:
        server.close()
    assert relay.subjects() == [f"Review {n}" for n in range(3)]
    rows = {str(message_from_bytes(row.raw)["Subject"]): row for row in await outbox.messages()}
    assert {row.status for row in rows.values()} == {"done"}
    assert rows["Review 1"].attempts == 2 and rows["Review 1"].last_error is None
    # The refusal's session was not given back: the next message opened one.
    assert deliverer.sessions.opened == 2


async def test_idle_sessions_are_ended_with_quit() -> None:
    relay = CountingRelay()
    server, port = await serve(relay)
    deliverer = SmtpRelay(RelaySettings.parse(f"127.0.0.1:{port}"),
                          sessions=RelaySessions(idle_seconds=0.05))
    try:
        await deliverer.deliver(b"Subject: Review 0\r\n\r\nhi\r\n", "", ["a@example.com"],
                                key="k0")
        await until(lambda: relay.quits == 1)
        await deliverer.deliver(b"Subject: Review 1\r\n\r\nhi\r\n", "", ["a@example.com"],
                                key="k1")
        await deliverer.close()
    finally:
        server.close()
    assert relay.subjects() == ["Review 0", "Review 1"]
    assert (len(relay.sessions), relay.quits, deliverer.sessions.reused) == (2, 2, 0)


async def test_a_relay_delivery_writes_one_transaction_a_message_not_two(
    outbox: Outbox, state_db: StateDB
) -> None:
    """The claim records the attempt (it wrote the lease anyway); each message's "sent" is
    committed right after its exchange, with any others sent meanwhile."""
    relay = CountingRelay()
    server, port = await serve(relay)
    worker = OutboxWorker(outbox, SmtpRelay(RelaySettings.parse(f"127.0.0.1:{port}")),
                          batch=20, concurrency=4)
    try:
        await enqueue(outbox, 20)
        async with statements([state_db.engine]) as seen:
            assert await worker.run_once() == 20
        await worker.stop()
    finally:
        server.close()
    assert len(relay.received) == 20
    rows = await outbox.messages()
    assert all(row.status == "done" and row.attempted_ms is not None for row in rows)
    # One claim, at most one transaction a message (fewer when sends end together); the old
    # way wrote the attempt and the sending apart: 41.
    assert seen.commits <= 21, seen.lines(80)


class Stalling:
    """A relay-like deliverer (not idempotent) that stops the clock's world for a while on
    its first message, as a process whose lease renewals failed would find it."""

    idempotent = False

    def __init__(self, outbox: Outbox, stall_ms: int) -> None:
        self.outbox = outbox
        self.stall_ms = stall_ms
        self.keys: list[str] = []

    async def deliver(self, raw: bytes, envelope_from: str, rcpt_tos: list[str], *,
                      key: str) -> None:
        self.keys.append(key)
        if len(self.keys) == 1:
            self.outbox.clock.advance(self.stall_ms)


async def test_a_worker_past_its_lease_sends_nothing_more(outbox: Outbox) -> None:
    """Its rows may be another worker's by now: it leaves them, and they go once."""
    await enqueue(outbox, 3)
    late = Stalling(outbox, stall_ms=60_000)
    assert await OutboxWorker(outbox, late, concurrency=1, lease_ms=10_000).run_once() == 3
    assert len(late.keys) == 1
    other = Stalling(outbox, stall_ms=0)
    assert await OutboxWorker(outbox, other, concurrency=1).run_once() == 2
    assert sorted(late.keys + other.keys) == sorted(row.id for row in await outbox.messages())


class HoldingBulk:
    """Delivers at once, but holds every review (bulk) until `release` is set."""

    idempotent = False

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.held = 0
        self.subjects: list[str] = []

    async def deliver(self, raw: bytes, envelope_from: str, rcpt_tos: list[str], *,
                      key: str) -> None:
        subject = str(message_from_bytes(raw)["Subject"])
        if subject.startswith("Review"):
            self.held += 1
            await self.release.wait()
        self.subjects.append(subject)


async def test_a_receipt_goes_out_while_a_batch_of_bulk_mail_is_under_way(
    outbox: Outbox
) -> None:
    """The main loop is in the middle of a batch of reviews (its deliveries slow); a receipt
    queued meanwhile is claimed by the express loop and delivered before that batch ends."""
    await enqueue(outbox, 8)
    deliverer = HoldingBulk()
    worker = OutboxWorker(outbox, deliverer, batch=8, concurrency=4, poll_seconds=60)
    worker.start()
    try:
        await until(lambda: deliverer.held == 4)
        await outbox.enqueue(new_message(
            mail_from=f"timebot@{DOMAIN}", to="ann@example.com", subject="Receipt: approved",
            text="Approved.", html="<p>Approved.</p>", mail_domain=DOMAIN),
            kind="receipt", envelope_from="")
        worker.wake_express()
        await until(lambda: deliverer.subjects == ["Receipt: approved"])
        assert deliverer.held == 4  # the batch of reviews still under way
        deliverer.release.set()
        for _ in range(1000):  # each marked sent once its exchange is over
            if {row.status for row in await outbox.messages()} == {"done"}:
                break
            await asyncio.sleep(0.01)
    finally:
        await worker.stop()
    assert {row.status for row in await outbox.messages()} == {"done"}
    assert sorted(deliverer.subjects) == sorted(
        ["Receipt: approved", *(f"Review {n}" for n in range(8))])
