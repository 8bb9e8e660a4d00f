"""Waiting for a wake-up or the end of an interval without losing a cancellation; taking
turns on the event loop through long loops (`taking_turns`).

Python 3.11's `asyncio.wait_for` swallows a cancellation that arrives together with the
result it waits for: it returns the result instead (gh-86296, fixed in 3.12). A worker that
loops on `wait_for(event.wait(), seconds)` and is woken at the moment it is stopped goes on
looping, and whoever awaits its stop waits forever (a draining `timebot serve` did, until
killed). `asyncio.timeout` counts cancellations and delivers this one."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from typing import TypeVar

T = TypeVar("T")


async def wait_for_event(event: asyncio.Event, seconds: float) -> bool:
    """Whether `event` was set within `seconds` (False when the time ran out)."""
    try:
        async with asyncio.timeout(seconds):
            await event.wait()
    except TimeoutError:
        return False
    return True


YIELD_EVERY = 100


async def taking_turns(items: Iterable[T], every: int = YIELD_EVERY) -> AsyncIterator[T]:
    """`items`, giving the event loop a turn after each `every` of them: a request that works
    through a whole organisation's rows in Python (10,000 timesheets took ~1 s with no await
    that waits) otherwise holds every other request of the process for that long."""
    for index, item in enumerate(items):
        if index and index % every == 0:
            await asyncio.sleep(0)
        yield item
