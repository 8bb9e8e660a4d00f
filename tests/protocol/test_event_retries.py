"""The event worker when a subscriber fails (issue #23), on SQLite and PostgreSQL: a temporary
cause (the service unreachable, a database error) is retried with growing delays for as long
as it lasts; an event failing for a reason of its own is set aside after its attempts; the
events behind either are dispatched meanwhile. The clock is the test's."""

from __future__ import annotations

import uuid

from sqlalchemy import delete

from plumbing.clock import Clock
from tests.protocol.conftest import StateDB
from timebot import events as events_module
from timebot.errors import ServiceUnavailable
from timebot.events import EventBus, EventStore, EventWorker, ServiceEvent
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
    bus.subscribe("test", subscriber)
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
