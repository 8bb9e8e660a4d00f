"""Time slices: long GraphQL executions give the event loop back every few milliseconds.

On SQLite statements run on the loop's thread, so a request of many resolver fields never
waits on anything: without a pause it would hold the loop (and every other request, /healthz
included) until it is done. Resolver-backed fields call `pause_if_due()`, which yields to
the loop once the slice has run out, wherever the time went since the last pause.
"""

from __future__ import annotations

import asyncio
from time import monotonic

SLICE_S = 0.02

_next_pause = monotonic() + SLICE_S


async def pause_if_due() -> None:
    global _next_pause
    now = monotonic()
    if now >= _next_pause:
        await asyncio.sleep(0)
        _next_pause = monotonic() + SLICE_S
