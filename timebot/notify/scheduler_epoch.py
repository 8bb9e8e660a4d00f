"""Since when the scheduler serves an organisation: the first tick that saw it records the
instant (once, whatever the number of processes: the first insert wins and every process
reads the same row). Periods that ended before it get no reminder, so that a first start (a
fresh demo seeded with weeks of history, an organisation created today) sends no burst of
reminders for weeks nobody could have been reminded of."""

from __future__ import annotations

from sqlalchemy import select

from plumbing.db import unit_of_work
from timebot.notify.ground import Ground
from timebot.state.db import insert_ignoring
from timebot.state.models import SchedulerEpoch


async def first_seen_ms(runtime: Ground, organisation_id: str) -> int:
    """The instant the scheduler first saw the organisation (recorded now if never)."""
    async with unit_of_work(runtime.state_sessions) as session:
        await session.execute(
            insert_ignoring(session, SchedulerEpoch, ("organisation_id",)),
            {"organisation_id": organisation_id, "first_seen_ms": runtime.clock.now_ms()},
        )
        seen = await session.scalar(
            select(SchedulerEpoch.first_seen_ms).where(
                SchedulerEpoch.organisation_id == organisation_id
            )
        )
    assert seen is not None
    return int(seen)


def ended_before(period_end_ms: int, since_ms: int) -> bool:
    """Pure: the period ended before the scheduler served the organisation (a period that
    ends at the very instant of the first tick is due: that tick is its reminder's)."""
    return period_end_ms < since_ms


async def recorded_first_seen_ms(runtime: Ground, organisation_id: str) -> int | None:
    """The recorded instant, without recording one (a preview changes nothing)."""
    async with runtime.read_sessions() as session:
        seen = await session.scalar(
            select(SchedulerEpoch.first_seen_ms).where(
                SchedulerEpoch.organisation_id == organisation_id
            )
        )
    return None if seen is None else int(seen)
