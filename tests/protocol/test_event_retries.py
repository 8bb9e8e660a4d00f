"""The event worker when a subscriber fails (issue #23), on SQLite and PostgreSQL: a temporary
cause (the service unreachable, a database error) is retried with growing delays for as long
as it lasts; an event failing for a reason of its own is set aside after its attempts; the
events behind either are dispatched meanwhile. The clock is the test's."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable

import pytest
from sqlalchemy import delete

from plumbing.clock import Clock
from tests.protocol.conftest import StateDB
from timebot.errors import ServiceUnavailable
from timebot.events import bus as events_module
from timebot.events.bus import EventBus, EventStore, EventWorker, ServiceEvent
from timebot.state.models import ReceivedEvent


async def test_failing_events_do_not_hold_up_the_others(state_db: StateDB) -> None:
    async with state_db.sessions() as session:
        await session.execute(delete(ReceivedEvent))
        await session.commit()
    store = EventStore(state_db.sessions, Clock(frozen_ms=1_800_000_000_000))
    for kind in ("outage", "poison", "fine"):
        await store.accept(ServiceEvent(uuid.uuid4().hex, kind, "o", 1, {}))
        store.clock.advance(1)
    outage = [10]
    seen: list[str] = []

    async def subscriber(event: ServiceEvent) -> None:
        if event.event == "outage" and outage[0] > 0:
            outage[0] -= 1
            raise ServiceUnavailable("cannot reach the service")
        if event.event == "poison":
            raise KeyError("approval")
        seen.append(event.event)

    bus = EventBus()
    bus.subscribe("test", subscriber, ("outage", "poison", "fine"))
    worker = EventWorker(store, bus, max_attempts=3)
    await worker.run_once()
    assert seen == ["fine"]
    for _ in range(10):
        store.clock.advance(events_module.BACKOFF.max_ms)
        await worker.run_once()
    rows = {row.event: row for row in await store.all()}
    assert (rows["outage"].status, rows["outage"].failures, rows["outage"].attempts) == (
        "done", 0, 11)
    assert (rows["poison"].status, rows["poison"].failures) == ("failed", 3)
    assert rows["poison"].outcome == "error: 'approval'"
    assert seen == ["fine", "outage"]


# Across organisations (#27): a claimed batch is dispatched one task per organisation, each in
# received order; one organisation's blocked, failing or crashed dispatch holds up no other's.


async def fresh_store(state_db: StateDB, events: list[tuple[str, str]]) -> EventStore:
    """An empty event table, then one event per (organisation, kind), received in that order."""
    async with state_db.sessions() as session:
        await session.execute(delete(ReceivedEvent))
        await session.commit()
    store = EventStore(state_db.sessions, Clock(frozen_ms=1_800_000_000_000))
    for organisation, kind in events:
        await store.accept(ServiceEvent(uuid.uuid4().hex, kind, organisation, 1, {}))
        store.clock.advance(1)
    return store


# The kinds the tests below make up: each organisation's events named apart.
KINDS = ("a1", "a2", "a3", "b1", "b2", "c1", "d1", "poison", "stuck")


def recording_bus(subscriber: Callable[[ServiceEvent], Awaitable[None]]) -> EventBus:
    bus = EventBus()
    bus.subscribe("test", subscriber, KINDS)
    return bus


async def test_a_blocked_organisation_does_not_hold_up_the_others(state_db: StateDB) -> None:
    store = await fresh_store(state_db, [("A", "a1"), ("A", "a2"), ("B", "b1"), ("B", "b2"),
                                         ("C", "c1")])
    release, others_done = asyncio.Event(), asyncio.Event()
    seen: list[str] = []

    async def subscriber(event: ServiceEvent) -> None:
        if event.event == "a1":
            await release.wait()  # A's service is slow
        seen.append(event.event)
        if {"b2", "c1"} <= set(seen):
            others_done.set()

    worker = EventWorker(store, recording_bus(subscriber))
    batch = asyncio.create_task(worker.run_once())
    # A guard against a hang, not a timing assert: sequential dispatch never gets here.
    await asyncio.wait_for(others_done.wait(), 30)
    assert "a1" not in seen and "a2" not in seen  # A's order: a2 waits behind a1
    release.set()
    assert await batch == 5
    assert [kind for kind in seen if kind.startswith("a")] == ["a1", "a2"]
    assert [kind for kind in seen if kind.startswith("b")] == ["b1", "b2"]
    assert {row.status for row in await store.all()} == {"done"}


async def test_a_failing_organisation_and_a_stop_mid_batch(state_db: StateDB) -> None:
    store = await fresh_store(state_db, [("A", "poison"), ("A", "a2"), ("B", "b1"),
                                         ("C", "stuck"), ("B", "b2")])
    stuck, b_done = asyncio.Event(), asyncio.Event()
    seen: list[str] = []

    async def subscriber(event: ServiceEvent) -> None:
        if event.event == "poison":
            raise KeyError("approval")
        if event.event == "stuck":
            stuck.set()
            await asyncio.Event().wait()  # never returns: the process is stopped meanwhile
        seen.append(event.event)
        if {"a2", "b2"} <= set(seen):
            b_done.set()

    worker = EventWorker(store, recording_bus(subscriber))
    batch = asyncio.create_task(worker.run_once())
    await asyncio.wait_for(asyncio.gather(stuck.wait(), b_done.wait()), 30)  # a hang guard
    batch.cancel()  # stop(): what was dispatched is recorded
    with pytest.raises(asyncio.CancelledError):
        await batch
    rows = {row.event: row for row in await store.all()}
    assert (rows["poison"].status, rows["poison"].failures) == ("queued", 1)
    assert rows["poison"].next_attempt_ms > store.clock.now_ms()  # its backoff
    assert {rows[kind].status for kind in ("a2", "b1", "b2")} == {"done"}
    assert (rows["stuck"].status, rows["stuck"].lease_owner) == ("working", worker.owner)
    assert seen == ["a2", "b1", "b2"] or seen.index("b1") < seen.index("b2")
    # After the lease, the stuck event is dispatched again (subscribers are idempotent).
    store.clock.advance(worker.lease_ms + 1)
    stuck.clear()
    stuck_again = asyncio.create_task(worker.run_once())
    await asyncio.wait_for(stuck.wait(), 30)
    stuck_again.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stuck_again


async def test_concurrency_is_bounded_and_one_organisation_shares_the_batch(
    state_db: StateDB,
) -> None:
    store = await fresh_store(state_db, [("A", "a1"), ("A", "a2"), ("A", "a3"), ("B", "b1"),
                                         ("C", "c1"), ("D", "d1")])
    release = asyncio.Event()
    running: list[str] = []
    most = [0]
    seen: list[str] = []

    async def subscriber(event: ServiceEvent) -> None:
        running.append(event.event)
        most[0] = max(most[0], len(running))
        if len(running) == 2:  # the first to run waits for a second one
            release.set()
        await release.wait()
        await asyncio.sleep(0)  # a yield: any other task allowed to start starts now
        running.remove(event.event)
        seen.append(event.event)

    worker = EventWorker(store, recording_bus(subscriber), concurrency=2, per_organisation=2)
    assert await worker.run_once() == 6
    assert most[0] == 2
    assert seen.index("a1") < seen.index("a2")
    assert "a3" not in seen  # handed back: claimable again, its attempt not counted
    rows = {row.event: row for row in await store.all()}
    assert (rows["a3"].status, rows["a3"].attempts, rows["a3"].lease_owner) == (
        "queued", 0, None)
    assert await worker.run_once() == 1
    assert seen[-1] == "a3"
    assert {row.status for row in await store.all()} == {"done"}
