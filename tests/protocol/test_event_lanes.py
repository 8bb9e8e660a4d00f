"""Events in lanes (timebot.events.bus.event_priority), on SQLite and PostgreSQL: a decision's
event is dispatched before the submissions' events received earlier — in the next claim, and
at once (the express claim) while a batch of them is being dispatched — and the submissions'
events still all go, each once."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import delete

from plumbing.clock import Clock
from tests.protocol.conftest import StateDB
from timebot.events.bus import (
    APPROVAL_REMINDER,
    APPROVAL_UPDATE,
    EventBus,
    EventStore,
    EventWorker,
    ServiceEvent,
    event_priority,
)
from timebot.events.webhooks import local_receiver
from timebot.state.lanes import BULK, INTERACTIVE
from timebot.state.models import ReceivedEvent


@dataclass(frozen=True)
class Delivery:
    id: str
    payload: dict[str, Any]


def update(action: str, submit: str) -> dict[str, Any]:
    return {"event": APPROVAL_UPDATE, "organisationId": "org", "timestamp": 1,
            "data": {"action": action, "submitId": submit, "status": "s", "stage": 0}}


@pytest.mark.parametrize(("kind", "action", "status", "lane"), [
    (APPROVAL_UPDATE, "submitted", "s", BULK), (APPROVAL_UPDATE, "restarted", "s", BULK),
    (APPROVAL_UPDATE, "reminder", "s", BULK), (APPROVAL_REMINDER, None, "s", BULK),
    (APPROVAL_UPDATE, "approved", "s", INTERACTIVE),  # a stage approved: the next one asked
    (APPROVAL_UPDATE, "approved", "a", INTERACTIVE),
    (APPROVAL_UPDATE, "rejected", "r", INTERACTIVE),
    (APPROVAL_UPDATE, "autoApproved", "a", INTERACTIVE),
    # The reconciler's and the approval poller's, without an action: a stage waiting, or
    # an outcome.
    (APPROVAL_UPDATE, None, "s", BULK), (APPROVAL_UPDATE, None, "a", INTERACTIVE),
])
def test_the_lane_of_an_event(kind: str, action: str | None, status: str, lane: int) -> None:
    data = {"status": status, **({"action": action} if action else {})}
    assert event_priority(ServiceEvent("d", kind, "org", 1, data)) == lane


class Dispatched:
    """A subscriber that records the submit ids it was handed; holds every "submitted" event
    while `hold` is clear."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.hold = asyncio.Event()
        self.hold.set()
        self.held = 0

    async def __call__(self, event: ServiceEvent) -> None:
        if event.data.get("action") == "submitted" and not self.hold.is_set():
            self.held += 1
            await self.hold.wait()
        self.seen.append(f"{event.data['action']}:{event.data['submitId']}")


async def world(state_db: StateDB) -> tuple[EventStore, Dispatched, EventBus]:
    async with state_db.sessions() as session:
        await session.execute(delete(ReceivedEvent))
        await session.commit()
    store = EventStore(state_db.sessions, Clock(frozen_ms=1_800_000_000_000))
    dispatched = Dispatched()
    bus = EventBus()
    bus.subscribe("test", dispatched, (APPROVAL_UPDATE,))
    return store, dispatched, bus


async def receive(store: EventStore, wake: Any, *payloads: dict[str, Any]) -> None:
    receiver = local_receiver(store, wake)
    await receiver([Delivery(uuid.uuid4().hex, payload) for payload in payloads])
    store.clock.advance(1)


async def test_a_decision_goes_before_the_submissions_received_earlier(
    state_db: StateDB
) -> None:
    store, dispatched, bus = await world(state_db)
    woken: list[bool] = []
    for number in range(30):
        await receive(store, woken.append, update("submitted", f"s{number}"))
    await receive(store, woken.append, update("approved", "s0"))
    assert woken == [False] * 30 + [True]
    worker = EventWorker(store, bus, claim_limit=10)
    assert await worker.run_once() in (10, 11)  # and one bulk row more may come
    assert dispatched.seen[:3] == ["approved:s0", "submitted:s0", "submitted:s1"]
    while await worker.run_once():
        pass
    assert sorted(dispatched.seen) == sorted(
        ["approved:s0", *(f"submitted:s{n}" for n in range(30))])
    assert {row.status for row in await store.all()} == {"done"}


async def test_a_decision_is_dispatched_while_a_batch_of_submissions_is_under_way(
    state_db: StateDB
) -> None:
    store, dispatched, bus = await world(state_db)
    dispatched.hold.clear()
    for number in range(5):
        await receive(store, lambda _interactive: None, update("submitted", f"s{number}"))
    worker = EventWorker(store, bus, poll_seconds=60)
    worker.start()
    try:
        worker.wake()
        for _ in range(1000):
            if dispatched.held:
                break
            await asyncio.sleep(0.01)
        await receive(store, worker.wake_for, update("approved", "s9"))
        for _ in range(1000):
            if dispatched.seen:
                break
            await asyncio.sleep(0.01)
        assert dispatched.seen == ["approved:s9"]  # the submissions' batch still held
        dispatched.hold.set()
        for _ in range(1000):
            if {row.status for row in await store.all()} == {"done"}:
                break
            await asyncio.sleep(0.01)
    finally:
        await worker.stop()
    assert sorted(dispatched.seen) == sorted(
        ["approved:s9", *(f"submitted:s{n}" for n in range(5))])
    assert {row.status for row in await store.all()} == {"done"}
