"""Waiting for a wake-up or the end of an interval without losing a cancellation.

Python 3.11's `asyncio.wait_for` swallows a cancellation that arrives together with the
result it waits for: it returns the result instead (gh-86296, fixed in 3.12). A worker that
loops on `wait_for(event.wait(), seconds)` and is woken at the moment it is stopped goes on
looping, and whoever awaits its stop waits forever (a draining `timebot serve` did, until
killed). `asyncio.timeout` counts cancellations and delivers this one."""

from __future__ import annotations

import asyncio


async def wait_for_event(event: asyncio.Event, seconds: float) -> bool:
    """Whether `event` was set within `seconds` (False when the time ran out)."""
    try:
        async with asyncio.timeout(seconds):
            await event.wait()
    except TimeoutError:
        return False
    return True
