"""Outbound mail through a real SMTP relay on loopback that refuses for a while: nothing lost,
nothing doubled, also with two workers (two processes' worth) on one database."""

from __future__ import annotations

import asyncio
import mailbox
from collections.abc import AsyncIterator
from email import message_from_bytes
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.smtp import SMTP, Envelope, Session
from sqlalchemy import delete

from mail.outbound import (
    MaildirOutbox,
    Outbox,
    OutboxWorker,
    RelaySettings,
    SmtpRelay,
    new_message,
)
from service.clock import Clock
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


@pytest.fixture
async def outbox(state_db: StateDB) -> AsyncIterator[Outbox]:
    async with state_db.sessions() as session:
        await session.execute(delete(OutboxMessage))
        await session.commit()
    yield Outbox(state_db.sessions, Clock(frozen_ms=1_800_000_000_000))


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
