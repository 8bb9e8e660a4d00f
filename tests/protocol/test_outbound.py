"""Outbound mail through a real SMTP relay on loopback that refuses for a while: nothing lost,
nothing doubled, also with two workers (two processes' worth) on one database."""

from __future__ import annotations

import asyncio
import mailbox
from email import message_from_bytes
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.smtp import SMTP, Envelope, Session
from sqlalchemy import update

from mail.queues import outbox as outbox_module
from mail.queues.outbox import (
    DeliveryError,
    MaildirOutbox,
    Outbox,
    OutboxWorker,
    RelaySettings,
    SmtpRelay,
    new_message,
)
from plumbing.clock import Clock
from tests.net import free_port
from tests.protocol.conftest import StateDB
from timebot.state.db import create_engine, session_factory
from timebot.state.models import OutboxMessage

DOMAIN = "timebot.localhost"


class FlakyRelay:
    """A real SMTP server: answers 451 to the first `refusals` messages, then stores them."""

    def __init__(self, refusals: int) -> None:
        self.refusals = refusals
        self.received: list[bytes] = []

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        if self.refusals > 0:
            self.refusals -= 1
            return "451 4.3.0 Try again later"
        self.received.append(bytes(envelope.original_content or b""))
        return "250 OK"


async def start_relay(handler: FlakyRelay) -> tuple[Any, int]:
    port = free_port()
    server = await asyncio.get_running_loop().create_server(
        lambda: SMTP(handler), "127.0.0.1", port
    )
    return server, port


def message(number: int) -> Any:
    return new_message(
        mail_from=f"timebot@{DOMAIN}", to="ann@example.com", subject=f"Review {number}",
        text=f"Body {number}", html=f"<p>Body {number}</p>", mail_domain=DOMAIN,
    )


async def drain(workers: list[OutboxWorker], clock: Clock, rounds: int = 12) -> None:
    for _ in range(rounds):
        await asyncio.gather(*(worker.run_once() for worker in workers))
        clock.advance(3_600_000)


async def test_a_relay_outage_loses_nothing_and_doubles_nothing(outbox: Outbox) -> None:
    relay = FlakyRelay(refusals=7)
    server, port = await start_relay(relay)
    try:
        for number in range(5):
            await outbox.enqueue(message(number), kind="test", envelope_from="")
        worker = OutboxWorker(outbox, SmtpRelay(RelaySettings.parse(f"127.0.0.1:{port}")))
        await drain([worker], outbox.clock)
    finally:
        server.close()
    subjects = sorted(str(message_from_bytes(raw)["Subject"]) for raw in relay.received)
    assert subjects == [f"Review {n}" for n in range(5)]
    rows = await outbox.messages()
    assert {row.status for row in rows} == {"done"}
    assert sum(row.attempts for row in rows) == 5 + 7


async def test_two_workers_send_each_message_once(outbox: Outbox, state_db: StateDB) -> None:
    relay = FlakyRelay(refusals=0)
    server, port = await start_relay(relay)
    other_engine = create_engine(state_db.url)  # a second process has its own pool
    try:
        for number in range(30):
            await outbox.enqueue(message(number), kind="test", envelope_from="")
        deliverer = SmtpRelay(RelaySettings.parse(f"smtp://127.0.0.1:{port}"))
        first = OutboxWorker(outbox, deliverer, batch=3)
        second = OutboxWorker(Outbox(session_factory(other_engine), outbox.clock), deliverer,
                              batch=3)
        await drain([first, second], outbox.clock, rounds=15)
    finally:
        server.close()
        await other_engine.dispose()
    subjects = [str(message_from_bytes(raw)["Subject"]) for raw in relay.received]
    assert sorted(subjects) == sorted(f"Review {n}" for n in range(30))


async def test_a_dedupe_key_enqueues_once(outbox: Outbox) -> None:
    assert await outbox.enqueue(message(1), kind="review", envelope_from="", dedupe_key="k1")
    assert not await outbox.enqueue(message(2), kind="review", envelope_from="", dedupe_key="k1")
    assert len(await outbox.messages("review")) == 1


async def test_without_a_relay_mail_lands_in_the_maildir(outbox: Outbox, tmp_path: Path) -> None:
    await outbox.enqueue(message(7), kind="test", envelope_from="", rcpt_tos=["ann@example.com"])
    worker = OutboxWorker(outbox, MaildirOutbox(tmp_path / "outbox"))
    await drain([worker], outbox.clock, rounds=1)
    delivered = list(mailbox.Maildir(str(tmp_path / "outbox")))
    assert len(delivered) == 1 and delivered[0]["Subject"] == "Review 7"
    assert list((tmp_path / "outbox" / "new").iterdir())


def test_relay_settings_parse() -> None:
    assert RelaySettings.parse("mail.example.com:587") == RelaySettings("mail.example.com", 587)
    smtps = RelaySettings.parse("smtps://bot%40x.com:p%3Ass@mail.example.com")
    assert smtps == RelaySettings("mail.example.com", 465, True, "bot@x.com", "p:ss")
    with pytest.raises(ValueError, match="TIMEBOT_SMTP_RELAY"):
        RelaySettings.parse("ftp://x")


class Recording:
    """A deliverer that keeps what it got; `during(n)` runs before the n-th delivery (from 0)."""

    idempotent = True

    def __init__(self, during: Any = None) -> None:
        self.raws: list[bytes] = []
        self.during = during

    async def deliver(self, raw: bytes, envelope_from: str, rcpt_tos: list[str], *,
                      key: str) -> None:
        if self.during is not None:
            await self.during(len(self.raws))
        self.raws.append(raw)


async def statuses(outbox: Outbox) -> list[tuple[str, str | None]]:
    return [(row.status, row.lease_owner) for row in await outbox.messages()]


async def test_the_outbox_keeps_the_bytes_of_the_message(outbox: Outbox) -> None:
    sent = message(3)
    assert await outbox.enqueue(sent, kind="test", envelope_from="")
    [row] = await outbox.messages()
    assert row.raw == sent.as_bytes() and row.rcpt_tos == ["ann@example.com"]
    assert (row.subject, row.message_id) == ("Review 3", str(sent["Message-ID"]))
    assert message_from_bytes(row.raw)["Subject"] == "Review 3"


async def test_delivered_rows_are_finished_if_the_worker_still_holds_them(
    outbox: Outbox, state_db: StateDB
) -> None:
    """Delivered rows are marked done together; one whose lease another worker took over in
    the meantime (this worker took too long) is left to that worker."""
    for number in range(4):
        await outbox.enqueue(message(number), kind="test", envelope_from="")

    async def take_over_the_first(index: int) -> None:
        if index == 2:
            first = (await outbox.messages())[0]
            async with state_db.sessions() as session:
                await session.execute(update(OutboxMessage).where(OutboxMessage.id == first.id)
                                      .values(lease_owner="other"))
                await session.commit()

    deliverer = Recording(take_over_the_first)
    assert await OutboxWorker(outbox, deliverer).run_once() == 4
    assert len(deliverer.raws) == 4
    assert sorted(await statuses(outbox), key=str) == sorted(
        [("working", "other"), ("done", None), ("done", None), ("done", None)], key=str
    )


async def test_stopping_a_worker_mid_batch_records_what_it_delivered(outbox: Outbox) -> None:
    for number in range(3):
        await outbox.enqueue(message(number), kind="test", envelope_from="")
    third = asyncio.Event()

    async def hang_on_the_third(index: int) -> None:
        if index == 2:
            third.set()
            await asyncio.Event().wait()

    worker = OutboxWorker(outbox, Recording(hang_on_the_third))
    task = asyncio.create_task(worker.run_once())
    await asyncio.wait_for(third.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sorted(await statuses(outbox), key=str) == sorted(
        [("done", None), ("done", None), ("working", worker.owner)], key=str
    )


async def test_delivered_rows_are_finished_while_a_batch_goes_on(
    outbox: Outbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(outbox_module, "FLUSH_SECONDS", 0.0)
    for number in range(3):
        await outbox.enqueue(message(number), kind="test", envelope_from="")
    seen: list[list[str]] = []

    async def look(index: int) -> None:
        seen.append(sorted(status for status, _ in await statuses(outbox)))

    await OutboxWorker(outbox, Recording(look), concurrency=1).run_once()
    assert seen == [["working"] * 3, ["done", "working", "working"],
                    ["done", "done", "working"]]
    assert [status for status, _ in await statuses(outbox)] == ["done"] * 3


async def test_deliveries_run_side_by_side_each_recorded_with_its_own_time(
    outbox: Outbox
) -> None:
    """Up to `concurrency` deliveries wait at once (a Maildir fsync, a relay's SMTP exchange);
    each row's sent_ms is when it was delivered, not when the batch was recorded."""
    for number in range(6):
        await outbox.enqueue(message(number), kind="test", envelope_from="")
    in_flight: list[int] = []
    most = [0]
    release = asyncio.Event()

    class Slow(Recording):
        async def deliver(self, raw: bytes, envelope_from: str, rcpt_tos: list[str], *,
                          key: str) -> None:
            in_flight.append(1)
            most[0] = max(most[0], len(in_flight))
            if len(in_flight) == 3:
                release.set()
            await release.wait()
            outbox.clock.advance(1000)
            in_flight.pop()
            await super().deliver(raw, envelope_from, rcpt_tos, key=key)

    await asyncio.wait_for(OutboxWorker(outbox, Slow(), concurrency=3).run_once(), 10)
    assert most[0] == 3
    rows = await outbox.messages()
    assert [row.status for row in rows] == ["done"] * 6
    assert len({row.sent_ms for row in rows}) == 6


async def test_a_failed_delivery_is_retried_later_and_the_others_are_done(
    outbox: Outbox
) -> None:
    for number in range(3):
        await outbox.enqueue(message(number), kind="test", envelope_from="")

    class FailSecond(Recording):
        async def deliver(self, raw: bytes, envelope_from: str, rcpt_tos: list[str], *,
                          key: str) -> None:
            if b"Review 1" in raw:
                raise DeliveryError("451 later", permanent=False)
            await super().deliver(raw, envelope_from, rcpt_tos, key=key)

    await OutboxWorker(outbox, FailSecond()).run_once()
    rows = {row.subject: row for row in await outbox.messages()}
    assert [(rows[f"Review {n}"].status, rows[f"Review {n}"].lease_owner) for n in range(3)] \
        == [("done", None), ("queued", None), ("done", None)]
    failed = rows["Review 1"]
    assert failed.last_error == "451 later"
    assert failed.next_attempt_ms == outbox.clock.now_ms() + outbox_module.retry_delay_ms(1)
