"""The outbox when one message fails (issue #23), against a real aiosmtpd relay on loopback and
the Maildir, on SQLite and PostgreSQL: a permanent refusal (5xx at MAIL FROM, RCPT or DATA)
ends the message and the next one goes; a 4xx stays temporary; a row that fails on its own is
set aside after its attempts; waiting mail goes at once when the relay answers again. The
worker's clock and polls are driven by the test: no wall-clock pace."""

from __future__ import annotations

import asyncio
import mailbox
import uuid
from email import message_from_bytes
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.smtp import SMTP, Envelope, Session
from sqlalchemy import insert

from mail.queues import outbox as outbox_module
from mail.queues.outbox import MaildirOutbox, Outbox, OutboxWorker, RelaySettings, SmtpRelay
from tests.net import free_port
from tests.protocol.conftest import StateDB
from tests.protocol.test_outbound import FlakyRelay, message, start_relay
from timebot.state.models import OutboxMessage

REFUSED = "nobody@example.com"


class RefusingRelay(FlakyRelay):
    """Takes every message, except that it answers `reply` at `stage` to mail for REFUSED."""

    def __init__(self, stage: str, reply: str) -> None:
        super().__init__(refusals=0)
        self.stage = stage
        self.reply = reply

    async def handle_RCPT(self, server: SMTP, session: Session, envelope: Envelope,
                          address: str, options: list[str]) -> str:
        if address == REFUSED and self.stage == "RCPT":
            return self.reply
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        if REFUSED in envelope.rcpt_tos and self.stage == "DATA":
            return self.reply
        return await super().handle_DATA(server, session, envelope)


class SenderRefusingRelay(FlakyRelay):
    """Refuses the envelope sender `bounces@…` at MAIL FROM (5xx), takes the others."""

    def __init__(self, reply: str) -> None:
        super().__init__(refusals=0)
        self.reply = reply

    async def handle_MAIL(self, server: SMTP, session: Session, envelope: Envelope,
                          address: str, options: list[str]) -> str:
        if address.startswith("bounces@"):
            return self.reply
        envelope.mail_from = address
        return "250 OK"


async def rows(outbox: Outbox) -> dict[str, OutboxMessage]:
    return {row.subject: row for row in await outbox.messages()}


async def poll(worker: OutboxWorker, times: int = 1, advance_ms: int = 0) -> None:
    for _ in range(times):
        await worker.run_once()
        worker.outbox.clock.advance(advance_ms)


@pytest.mark.parametrize("stage, reply", [
    ("RCPT", "550 5.1.1 No such user"),
    ("DATA", "554 5.6.0 Message refused"),
])
async def test_a_5xx_to_a_recipient_or_the_data_ends_the_message(
    outbox: Outbox, stage: str, reply: str
) -> None:
    relay = RefusingRelay(stage, reply)
    server, port = await start_relay(relay)
    try:
        await outbox.enqueue(message(1), kind="review", envelope_from="", rcpt_tos=[REFUSED])
        outbox.clock.advance(1)
        await outbox.enqueue(message(2), kind="review", envelope_from="")
        worker = OutboxWorker(outbox, SmtpRelay(RelaySettings.parse(f"127.0.0.1:{port}")),
                              concurrency=1)
        await poll(worker, times=4, advance_ms=3_600_000)
    finally:
        server.close()
    found = await rows(outbox)
    refused = found["Review 1"]
    assert (refused.status, refused.attempts) == ("failed", 1)
    assert reply in (refused.last_error or "")
    assert found["Review 2"].status == "done"
    assert [message_from_bytes(raw)["Subject"] for raw in relay.received] == ["Review 2"]


async def test_a_5xx_to_the_sender_ends_the_message(outbox: Outbox) -> None:
    relay = SenderRefusingRelay("553 5.7.1 Sender address rejected")
    server, port = await start_relay(relay)
    try:
        await outbox.enqueue(message(1), kind="review", envelope_from="bounces@example.com")
        outbox.clock.advance(1)
        await outbox.enqueue(message(2), kind="review", envelope_from="timebot@example.com")
        worker = OutboxWorker(outbox, SmtpRelay(RelaySettings.parse(f"127.0.0.1:{port}")))
        await poll(worker, times=3, advance_ms=3_600_000)
    finally:
        server.close()
    found = await rows(outbox)
    assert (found["Review 1"].status, found["Review 1"].attempts) == ("failed", 1)
    assert "553 5.7.1 Sender address rejected" in (found["Review 1"].last_error or "")
    assert found["Review 2"].status == "done"


async def test_a_4xx_to_a_recipient_is_temporary(outbox: Outbox) -> None:
    relay = RefusingRelay("RCPT", "450 4.2.1 Mailbox busy, try later")
    server, port = await start_relay(relay)
    try:
        await outbox.enqueue(message(1), kind="review", envelope_from="", rcpt_tos=[REFUSED])
        worker = OutboxWorker(outbox, SmtpRelay(RelaySettings.parse(f"127.0.0.1:{port}")))
        await poll(worker, times=8, advance_ms=3_600_000)
    finally:
        server.close()
    [row] = (await rows(outbox)).values()
    assert (row.status, row.attempts) == ("queued", 8)
    assert "450 4.2.1" in (row.last_error or "")


async def test_a_row_that_fails_on_its_own_is_set_aside_and_the_next_one_goes(
    outbox: Outbox, state_db: StateDB, tmp_path: Path
) -> None:
    """A row no deliverer can take (its recipients are not addresses: written by an older
    version, or by hand) is retried a few times, then set aside; the one behind it is
    delivered at once, not after it."""
    now = outbox.clock.now_ms()
    async with state_db.sessions() as session:
        await session.execute(insert(OutboxMessage).values(
            id=uuid.uuid4().hex[:24], message_id="<bad@example.com>", kind="review",
            envelope_from="", rcpt_tos=[None], subject="Poisoned", raw=b"Subject: x\r\n\r\nx",
            status="queued", attempts=0, next_attempt_ms=now - 1, created_ms=now - 1))
        await session.commit()
    await outbox.enqueue(message(2), kind="review", envelope_from="", rcpt_tos=["a@b.example"])
    worker = OutboxWorker(outbox, MaildirOutbox(tmp_path / "outbox"), concurrency=1)
    await worker.run_once()
    delivered = list(mailbox.Maildir(str(tmp_path / "outbox")))
    assert [m["Subject"] for m in delivered] == ["Review 2"]
    poisoned = (await rows(outbox))["Poisoned"]
    assert (poisoned.status, poisoned.failures) == ("queued", 1)
    assert "TypeError" in (poisoned.last_error or "")
    for _ in range(outbox_module.MAX_OWN_FAILURES * 2):
        outbox.clock.advance(outbox_module.MAX_RETRY_MS)
        await worker.run_once()
    poisoned = (await rows(outbox))["Poisoned"]
    assert (poisoned.status, poisoned.failures, poisoned.attempts) == (
        "failed", outbox_module.MAX_OWN_FAILURES, outbox_module.MAX_OWN_FAILURES)


async def test_waiting_mail_goes_at_once_when_the_relay_answers_again(outbox: Outbox) -> None:
    """Nothing listens on the relay's port: three messages fail and wait (30 s, then 60 s).
    The relay comes back; a new message goes through; the three go at the next poll, not a
    minute (or an hour) later."""
    port = free_port()
    worker = OutboxWorker(outbox, SmtpRelay(RelaySettings.parse(f"127.0.0.1:{port}")))
    for number in range(3):
        await outbox.enqueue(message(number), kind="review", envelope_from="")
    await worker.run_once()
    outbox.clock.advance(outbox_module.retry_delay_ms(1))
    await worker.run_once()
    waiting = await rows(outbox)
    assert {row.status for row in waiting.values()} == {"queued"}
    assert {row.next_attempt_ms - outbox.clock.now_ms() for row in waiting.values()} == {
        outbox_module.retry_delay_ms(2)}

    relay = FlakyRelay(refusals=0)
    server: Any = await asyncio.get_running_loop().create_server(
        lambda: SMTP(relay), "127.0.0.1", port)
    try:
        await outbox.enqueue(message(9), kind="review", envelope_from="")
        assert await worker.run_once() == 1  # the new one: the relay answers again
        assert await worker.run_once() == 3  # the waiting ones, at once (same clock)
    finally:
        server.close()
    assert {row.status for row in (await rows(outbox)).values()} == {"done"}
    assert sorted(str(message_from_bytes(raw)["Subject"]) for raw in relay.received) == [
        "Review 0", "Review 1", "Review 2", "Review 9"]
