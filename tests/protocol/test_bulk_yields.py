"""Bulk work yields to people (plumbing.urgency.yield_to_people), on SQLite and PostgreSQL:
while work a person waits on is under way in the process, a submission's fan-out event and a
bulk mail wait before they start — a decision's event and a receipt do not — and bulk work
goes on once the person's work ends, or when its limit passes."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from mail.queues.outbox import MaildirOutbox, Outbox, OutboxWorker
from plumbing import urgency
from tests.protocol.conftest import StateDB
from tests.protocol.test_event_lanes import receive, update, world
from tests.protocol.test_outbox_lanes import by_status, queue
from tests.protocol.test_relay_sessions import until
from tests.test_plumbing_urgency import a_person_waiting
from timebot.events.bus import EventWorker
from timebot.state.queue import DONE, QUEUED


async def test_a_fan_out_event_waits_for_a_person_s_work_and_a_decision_does_not(
    state_db: StateDB, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(urgency, "YIELD_SECONDS", 30.0)
    store, dispatched, bus = await world(state_db)
    await receive(store, lambda _interactive: None,
                  update("submitted", "s1"), update("approved", "s2"))
    async with a_person_waiting():
        run = asyncio.create_task(EventWorker(store, bus).run_once())
        await until(lambda: "approved:s2" in dispatched.seen, 30)
        await asyncio.sleep(0.2)
        assert dispatched.seen == ["approved:s2"]  # the submission's fan-out waits
    assert await asyncio.wait_for(run, 30) == 2
    assert dispatched.seen == ["approved:s2", "submitted:s1"]


async def test_a_fan_out_still_goes_on_when_people_never_stop(state_db: StateDB) -> None:
    store, dispatched, bus = await world(state_db)
    await receive(store, lambda _interactive: None,
                  *(update("submitted", f"s{n}") for n in range(5)))
    async with a_person_waiting():  # for the whole run: each event waits its limit at most
        assert await asyncio.wait_for(EventWorker(store, bus).run_once(), 30) == 5
    assert len(dispatched.seen) == 5


async def test_review_mail_waits_for_a_person_s_work_and_a_receipt_does_not(
    outbox: Outbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(urgency, "YIELD_SECONDS", 30.0)
    await queue(outbox, "review", 2, "approver")
    await queue(outbox, "receipt", 1, "replier")
    maildir = tmp_path / "outbox"
    delivering = OutboxWorker(outbox, MaildirOutbox(maildir))
    async with a_person_waiting():
        run = asyncio.create_task(delivering.run_once())
        await until(lambda: (maildir / "new").exists()
                    and len(os.listdir(maildir / "new")) == 1, 30)
        await asyncio.sleep(0.2)
        assert len(os.listdir(maildir / "new")) == 1  # the receipt alone
    assert await asyncio.wait_for(run, 30) == 3
    assert await by_status(outbox, "receipt") == {DONE: 1}
    assert await by_status(outbox, "review") == {DONE: 2}
    assert QUEUED not in await by_status(outbox, "review")
