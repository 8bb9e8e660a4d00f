"""Outbound mail after a crash: a worker process SIGKILLed mid-batch has its rows taken over
within seconds by another worker, and each message is in the Maildir outbox exactly once; a
delivery attempted twice for one row writes one file; a relay exchange is recorded as
attempted before it begins."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from email import message_from_bytes
from pathlib import Path
from typing import Any

from aiosmtpd.smtp import SMTP, Envelope, Session
from sqlalchemy import delete, select

from mail.queues.outbox import MaildirOutbox, Outbox, OutboxWorker, RelaySettings, SmtpRelay
from plumbing.clock import Clock
from tests.protocol.conftest import StateDB
from tests.protocol.test_outbound import message, start_relay
from timebot.state.models import OutboxMessage

ROOT = Path(__file__).resolve().parents[2]


async def clear(state_db: StateDB) -> None:
    async with state_db.sessions() as session:
        await session.execute(delete(OutboxMessage))
        await session.commit()


def subjects_in(path: Path) -> list[str]:
    found = []
    for folder in ("new", "cur"):
        for file in (path / folder).iterdir():
            found.append(str(message_from_bytes(file.read_bytes())["Subject"]))
    return found


async def test_a_delivery_attempted_twice_for_one_row_leaves_one_file(tmp_path: Path) -> None:
    maildir = MaildirOutbox(tmp_path / "outbox")
    raw = message(1).as_bytes()
    await maildir.deliver(raw, "", ["ann@example.com"], key="row1")
    await maildir.deliver(raw, "", ["ann@example.com"], key="row1")
    # also once a reader has moved it to cur/ and flagged it seen
    [name] = os.listdir(tmp_path / "outbox" / "new")
    os.rename(tmp_path / "outbox" / "new" / name, tmp_path / "outbox" / "cur" / f"{name}:2,S")
    await maildir.deliver(raw, "", ["ann@example.com"], key="row1")
    await maildir.deliver(message(2).as_bytes(), "", ["ann@example.com"], key="row2")
    assert sorted(subjects_in(tmp_path / "outbox")) == ["Review 1", "Review 2"]
    assert os.listdir(tmp_path / "outbox" / "tmp") == []


async def test_a_worker_killed_mid_batch_is_taken_over_and_nothing_is_doubled(
    state_db: StateDB, tmp_path: Path
) -> None:
    await clear(state_db)
    outbox = Outbox(state_db.sessions, Clock())
    for number in range(100):
        await outbox.enqueue(message(number), kind="test", envelope_from="")
    path = tmp_path / "outbox"
    MaildirOutbox(path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.protocol.outbox_worker_process", state_db.url, str(path),
        cwd=ROOT, env=env, stdout=asyncio.subprocess.PIPE)
    try:
        assert process.stdout is not None
        dead_owner = (await process.stdout.readline()).decode().strip()
        deadline = time.monotonic() + 60
        while len(os.listdir(path / "new")) < 10:
            assert time.monotonic() < deadline and process.returncode is None
            await asyncio.sleep(0.01)
    finally:
        process.send_signal(signal.SIGKILL)
        await process.wait()
    async with state_db.sessions() as session:
        held = list(await session.scalars(select(OutboxMessage.id).where(
            OutboxMessage.status == "working", OutboxMessage.lease_owner == dead_owner)))
    assert held, "killed mid-batch: some rows were held by the dead worker"
    assert len(os.listdir(path / "new")) < 100

    # Another worker takes the dead one's rows over once their short lease runs out.
    survivor = OutboxWorker(outbox, MaildirOutbox(path))
    deadline = time.monotonic() + 30
    while True:
        await survivor.run_once()
        rows = await outbox.messages()
        if all(row.status == "done" for row in rows):
            break
        assert time.monotonic() < deadline, "the dead worker's rows were not taken over"
        await asyncio.sleep(0.2)
    taken_over = {row.id for row in rows if row.id in held}
    assert taken_over == set(held)
    subjects = subjects_in(path)
    assert sorted(subjects) == sorted(f"Review {n}" for n in range(100))


async def test_a_relay_exchange_is_recorded_as_attempted_before_it_begins(
    state_db: StateDB,
) -> None:
    await clear(state_db)
    outbox = Outbox(state_db.sessions, Clock())
    await outbox.enqueue(message(1), kind="test", envelope_from="")
    seen: list[Any] = []

    class Looking:
        async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
            async with state_db.sessions() as db:
                row = (await db.scalars(select(OutboxMessage))).one()
                seen.append((row.status, row.attempted_ms is not None))
            return "250 OK"

    server, port = await start_relay(Looking())  # type: ignore[arg-type]
    try:
        worker = OutboxWorker(outbox, SmtpRelay(RelaySettings.parse(f"127.0.0.1:{port}")))
        assert await worker.run_once() == 1
    finally:
        server.close()
    assert seen == [("working", True)]
    [row] = await outbox.messages()
    assert row.status == "done" and row.sent_ms is not None


async def test_a_live_workers_slow_delivery_is_not_taken_from_it(state_db: StateDB) -> None:
    """The heartbeat renews the short lease while the worker holds the row: another worker
    finds nothing to take, however long the delivery lasts."""
    await clear(state_db)
    outbox = Outbox(state_db.sessions, Clock())
    await outbox.enqueue(message(1), kind="test", envelope_from="")
    holding, release = asyncio.Event(), asyncio.Event()
    delivered: list[str] = []

    class SlowRelay:
        idempotent = False

        async def deliver(self, raw: bytes, envelope_from: str, rcpt_tos: list[str], *,
                          key: str) -> None:
            holding.set()
            await release.wait()
            delivered.append(key)

    class QuickRelay(SlowRelay):
        async def deliver(self, raw: bytes, envelope_from: str, rcpt_tos: list[str], *,
                          key: str) -> None:
            delivered.append(key)

    slow = OutboxWorker(outbox, SlowRelay(), lease_ms=1000)
    other = OutboxWorker(Outbox(state_db.sessions, Clock()), QuickRelay())
    task = asyncio.create_task(slow.run_once())
    try:
        await asyncio.wait_for(holding.wait(), 10)
        for _ in range(6):  # three leases' worth
            await asyncio.sleep(0.5)
            assert await other.run_once() == 0
        release.set()
        assert await task == 1
    finally:
        release.set()
        await asyncio.gather(task, return_exceptions=True)
    [row] = await outbox.messages()
    assert (row.status, delivered) == ("done", [row.id])
