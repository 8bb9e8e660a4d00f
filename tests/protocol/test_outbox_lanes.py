"""The outbox's lanes (timebot.state.lanes) through the Outbox and its worker, delivering to the
Maildir, on SQLite and PostgreSQL: a receipt queued behind 500 review mails goes in the first
batch; a steady stream of receipts still lets review mail out (one a batch at least); two
workers deliver each message once, the receipts first."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from mail.queues.outbox import MaildirOutbox, Outbox, OutboxWorker, new_message
from timebot.state.lanes import BULK, INTERACTIVE
from timebot.state.queue import DONE, QUEUED

DOMAIN = "timebot.example"
BATCH = 20


async def queue(outbox: Outbox, kind: str, count: int, prefix: str) -> None:
    for n in range(count):
        message = new_message(mail_from=f"timebot@{DOMAIN}", to=f"{prefix}{n}@example.com",
                              subject=f"{prefix} {n}", text="body", mail_domain=DOMAIN)
        await outbox.enqueue(message, kind=kind, envelope_from=f"timebot@{DOMAIN}")


async def by_status(outbox: Outbox, kind: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in await outbox.messages(kind):
        counts[row.status] = counts.get(row.status, 0) + 1
    return counts


def worker(outbox: Outbox, maildir: Path) -> OutboxWorker:
    return OutboxWorker(outbox, MaildirOutbox(maildir), batch=BATCH)


async def test_a_receipt_goes_ahead_of_500_review_mails(outbox: Outbox, tmp_path: Path) -> None:
    await queue(outbox, "review", 500, "approver")
    await queue(outbox, "receipt", 1, "replier")
    assert {row.priority for row in await outbox.messages("review")} == {BULK}
    assert {row.priority for row in await outbox.messages("receipt")} == {INTERACTIVE}
    delivering = worker(outbox, tmp_path / "outbox")
    # Its first batch: the receipt, then the oldest review mails (the oldest bulk row is
    # claimed besides the batch: on PostgreSQL it may come as one more).
    claimed = await delivering.run_once()
    assert claimed in (BATCH, BATCH + 1)
    assert await by_status(outbox, "receipt") == {DONE: 1}
    assert await by_status(outbox, "review") == {DONE: claimed - 1, QUEUED: 501 - claimed}
    [receipt] = await outbox.messages("receipt")
    assert MaildirOutbox.file_name(receipt.id) in os.listdir(tmp_path / "outbox" / "new")
    sent_first = sorted(row.subject for row in await outbox.messages("review")
                        if row.status == DONE)
    assert sent_first == sorted(f"approver {n}" for n in range(claimed - 1))


async def test_review_mail_goes_out_under_a_steady_stream_of_receipts(
    outbox: Outbox, tmp_path: Path,
) -> None:
    await queue(outbox, "review", 30, "approver")
    delivering = worker(outbox, tmp_path / "outbox")
    for round_ in range(5):
        await queue(outbox, "receipt", BATCH + 5, f"replier{round_}-")  # more than a batch
        await delivering.run_once()
        assert await by_status(outbox, "review") == {DONE: round_ + 1, QUEUED: 29 - round_}


async def test_two_workers_deliver_each_message_once_receipts_first(
    outbox: Outbox, tmp_path: Path,
) -> None:
    await queue(outbox, "review", 100, "approver")
    await queue(outbox, "receipt", 10, "replier")
    await queue(outbox, "digest", 50, "reader")
    maildir = tmp_path / "outbox"
    workers = [worker(outbox, maildir), worker(outbox, maildir)]
    await asyncio.gather(*(one.run_once() for one in workers))
    assert await by_status(outbox, "receipt") == {DONE: 10}
    while sum(await asyncio.gather(*(one.run_once() for one in workers))):
        pass
    rows = await outbox.messages()
    assert {row.status for row in rows} == {DONE} and len(rows) == 160
    assert sorted(os.listdir(maildir / "new")) == sorted(
        MaildirOutbox.file_name(row.id) for row in rows)
    assert {row.attempts for row in rows} == {1}  # each claimed once: never sent twice
