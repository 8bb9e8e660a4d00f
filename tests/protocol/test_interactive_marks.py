"""Where timebot marks work a person waits on (plumbing.urgency), so that its SQLite writes
take their turn first (plumbing.write_turns), on SQLite and PostgreSQL: an inbox worker's
mail, a queue's express lane, and an event dispatched in a batch by its own lane — a
submission's fan-out is not marked, a decision's outcome is."""

from __future__ import annotations

import asyncio

from mail.queues.inbox import InboundMessage, Inbox, InboxWorker
from plumbing.urgency import is_interactive
from tests.protocol.conftest import StateDB
from tests.protocol.test_event_lanes import receive, update, world
from tests.protocol.test_inbox_lanes import accept, inbox  # noqa: F401 (the fixture)
from timebot.events.bus import APPROVAL_UPDATE, EventWorker, ServiceEvent
from timebot.state.worker import PollingWorker


async def test_an_inbox_worker_s_mail_is_work_a_person_waits_on(
    inbox: Inbox,  # noqa: F811 (the fixture)
) -> None:
    seen: list[bool] = []
    handled = asyncio.Event()

    async def processor(_message: InboundMessage) -> str:
        seen.append(is_interactive())
        handled.set()
        return "ok"

    await accept(inbox, "approve")
    worker = InboxWorker(inbox, processor)
    worker.start()
    try:
        await asyncio.wait_for(handled.wait(), 30)
    finally:
        await worker.stop()
    assert seen == [True]
    assert not is_interactive()


async def test_an_express_lane_is_marked_and_the_main_loop_is_not() -> None:
    class Worker(PollingWorker):
        express = True

        def __init__(self) -> None:
            super().__init__(poll_seconds=60)
            self.marks: dict[str, bool] = {}
            self.both = asyncio.Event()

        async def run_once(self) -> int:
            self.marks["main"] = is_interactive()
            return 0

        async def run_express(self) -> int:
            self.marks["express"] = is_interactive()
            self.both.set()
            return 0

    worker = Worker()
    worker.start()
    try:
        worker.wake_express()
        await asyncio.wait_for(worker.both.wait(), 30)
    finally:
        await worker.stop()
    assert worker.marks == {"main": False, "express": True}


async def test_an_event_is_dispatched_marked_by_its_own_lane(state_db: StateDB) -> None:
    store, _dispatched, bus = await world(state_db)
    marks: dict[str, bool] = {}

    async def subscriber(event: ServiceEvent) -> None:
        marks[str(event.data["action"])] = is_interactive()

    bus.subscribe("marks", subscriber, (APPROVAL_UPDATE,))
    nothing = lambda _interactive: None  # noqa: E731
    await receive(store, nothing, update("submitted", "s1"), update("approved", "s2"))
    assert await EventWorker(store, bus).run_once() == 2
    assert marks == {"submitted": False, "approved": True}
