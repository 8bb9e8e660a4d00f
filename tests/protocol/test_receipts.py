"""Queueing receipts (mail.outbound.receipt_sender.ReceiptSender) on SQLite and PostgreSQL: once per
reply, error receipts at most once an hour per sender, in the transaction that records the reply."""

from __future__ import annotations

from collections.abc import AsyncIterator
from email import message_from_bytes
from email.policy import default

import pytest
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from mail.outbound.receipt_sender import ReceiptSender, receipt_dedupe_key
from mail.outbound.receipts import Outcome, Verdict
from mail.queues.outbox import Outbox
from mail.reading.message import read_message
from plumbing.clock import Clock
from tests.protocol.conftest import StateDB
from timebot.state.models import MailErrorReceipt, OutboxMessage

DOMAIN = "timebot.localhost"
HOUR = 3_600_000
APPROVED = Outcome(Verdict.APPROVED, "approved", "You approved it.")
REFUSED = Outcome(Verdict.NOTHING_CHANGED, "not-your-turn", "It is not your turn.", "Wait.")


def reply(number: int, sender: str = "mia@example.com") -> bytes:
    return (
        f"From: Mia <{sender}>\r\nTo: approvals+t@{DOMAIN}\r\nSubject: Re: Timesheet of Bob\r\n"
        f"Message-ID: <r{number}@example.com>\r\n\r\napprove\r\n"
    ).encode()


@pytest.fixture
async def sender(state_db: StateDB) -> AsyncIterator[ReceiptSender]:
    async with state_db.sessions() as session:
        await session.execute(delete(OutboxMessage))
        await session.execute(delete(MailErrorReceipt))
        await session.commit()
    clock = Clock(frozen_ms=1_800_000_000_000)
    yield ReceiptSender(state_db.sessions, Outbox(state_db.sessions, clock), clock,
                        mail_from=f"timebot@{DOMAIN}", mail_domain=DOMAIN)


async def receipts(sender: ReceiptSender) -> list[OutboxMessage]:
    return await sender.outbox.messages("receipt")


async def test_a_receipt_is_queued_once_per_reply(sender: ReceiptSender) -> None:
    woken: list[int] = []
    sender.wake = lambda: woken.append(1)
    read = read_message(reply(1))
    assert await sender.send(APPROVED, read, "mid:r1@example.com") == "queued"
    assert await sender.send(APPROVED, read, "mid:r1@example.com") == "already queued"
    assert woken == [1]
    [row] = await receipts(sender)
    assert (row.dedupe_key, row.envelope_from, row.rcpt_tos, row.subject) == (
        receipt_dedupe_key("mid:r1@example.com"), "", ["mia@example.com"],
        "Re: Timesheet of Bob",
    )
    parsed = message_from_bytes(row.raw, policy=default)
    assert parsed["In-Reply-To"] == "<r1@example.com>"
    assert parsed["Auto-Submitted"] == "auto-replied"
    assert parsed["X-Auto-Response-Suppress"] == "All"
    assert parsed["Message-ID"] == row.message_id


async def test_what_also_records_goes_with_the_receipt(sender: ReceiptSender) -> None:
    """`also` runs in the receipt's transaction, each time (it records the reply's outcome);
    when it fails, no receipt is queued."""
    calls: list[str] = []

    async def record(session: AsyncSession) -> None:
        calls.append("recorded")

    read = read_message(reply(2))
    assert await sender.send(APPROVED, read, "k2", also=record) == "queued"
    assert await sender.send(APPROVED, read, "k2", also=record) == "already queued"
    assert calls == ["recorded", "recorded"]

    async def fail(session: AsyncSession) -> None:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        await sender.send(APPROVED, read_message(reply(3)), "k3", also=fail)
    assert [row.dedupe_key for row in await receipts(sender)] == [receipt_dedupe_key("k2")]


async def test_a_reply_without_a_sender_gets_none(sender: ReceiptSender) -> None:
    raw = b"To: approvals+t@timebot.localhost\r\nSubject: x\r\n\r\napprove\r\n"
    assert await sender.send(APPROVED, read_message(raw), "k") == "no sender"
    assert await receipts(sender) == []


async def test_error_receipts_go_to_a_sender_once_an_hour(
    sender: ReceiptSender, state_db: StateDB
) -> None:
    clock = sender.clock
    assert await sender.send(REFUSED, read_message(reply(1)), "e1") == "queued"
    # the same reply again: already queued, and the sender's slot is not spent on it
    clock.advance(HOUR)
    assert await sender.send(REFUSED, read_message(reply(1)), "e1") == "already queued"
    async with state_db.sessions() as session:
        slot = await session.scalar(select(MailErrorReceipt.last_sent_ms))
    assert slot == clock.now_ms() - HOUR
    # another refusal within the hour of the last one sent: none
    clock.advance(-HOUR // 2)
    assert await sender.send(REFUSED, read_message(reply(2)), "e2") == "rate-limited"
    # (sender addresses are compared without case)
    assert await sender.send(REFUSED, read_message(reply(3, "MIA@example.com")), "e3") \
        == "rate-limited"
    # other senders are not limited by it; receipts that are no refusal never are
    assert await sender.send(REFUSED, read_message(reply(4, "tom@example.com")), "e4") \
        == "queued"
    assert await sender.send(APPROVED, read_message(reply(5)), "a5") == "queued"
    # an hour after the last one: again
    clock.advance(HOUR // 2)
    assert await sender.send(REFUSED, read_message(reply(6)), "e6") == "queued"
    assert await sender.send(REFUSED, read_message(reply(7)), "e7") == "rate-limited"
    keys = sorted(str(row.dedupe_key) for row in await receipts(sender))
    assert keys == sorted(receipt_dedupe_key(k) for k in ("e1", "e4", "a5", "e6"))
    async with state_db.sessions() as session:
        slots = dict((await session.execute(
            select(MailErrorReceipt.sender, MailErrorReceipt.last_sent_ms))).all())
    assert slots == {"mia@example.com": clock.now_ms(),
                     "tom@example.com": clock.now_ms() - HOUR // 2}
