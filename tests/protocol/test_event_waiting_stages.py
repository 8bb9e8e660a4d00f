"""EventStore.waiting_stages, on SQLite and PostgreSQL: the (submission, stage) of an
organisation's approval updates still to be dispatched that say the timesheet waits — what the
reconciler leaves to them (timebot.notify.reconcile). Dispatched, failed for good, another
organisation's, another kind's, or an outcome's are not waiting."""

from __future__ import annotations

from sqlalchemy import update as sql_update

from tests.protocol.conftest import StateDB
from tests.protocol.test_event_lanes import receive, update, world
from timebot.events.bus import APPROVAL_REMINDER, EventWorker
from timebot.state.models import ReceivedEvent
from timebot.state.queue import FAILED, WORKING


def _at(stage: int, payload: dict[str, object], **changes: object) -> dict[str, object]:
    data = dict(payload["data"])  # type: ignore[call-overload]
    data.update(stage=stage, **changes)
    return {**payload, "data": data}


async def test_the_stages_that_queued_events_will_ask(state_db: StateDB) -> None:
    store, _dispatched, bus = await world(state_db)
    nothing = lambda _interactive: None  # noqa: E731
    await receive(store, nothing, update("submitted", "done"))
    await EventWorker(store, bus).run_once()  # dispatched: no longer waiting
    await receive(store, nothing,
                  update("submitted", "queued"),
                  _at(1, update("approved", "next-stage")),
                  update("submitted", "in-hand"),
                  update("submitted", "failed"),
                  _at(0, update("approved", "settled"), status="a"),
                  {**update("submitted", "elsewhere"), "organisationId": "other"},
                  {**update("submitted", "reminded"), "event": APPROVAL_REMINDER})
    delivery_of = {row.data["submitId"]: row.delivery_id for row in await store.all()}
    async with state_db.sessions() as session:
        for submit, status in (("in-hand", WORKING), ("failed", FAILED)):
            await session.execute(sql_update(ReceivedEvent).where(
                ReceivedEvent.delivery_id == delivery_of[submit]).values(status=status))
        await session.commit()
    assert await store.waiting_stages("org") == {("queued", 0), ("next-stage", 1), ("in-hand", 0)}
    assert await store.waiting_stages("other") == {("elsewhere", 0)}
    assert await store.waiting_stages("nobody") == set()
