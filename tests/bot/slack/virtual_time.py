"""A clock that moves only when the test moves it: the Slack sender's pacer sleeps on it, the
fake Slack stamps calls with it. The test advances it to the next sleeper's time once every
lane still sending is asleep on it, so the pace it checks is the one the pacer kept, whatever
the machine's load does to the network's timing."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable


class VirtualClock:
    def __init__(self, start: float = 1000.0) -> None:
        self.t = start
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        woken: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self.t + seconds, next(self._order), woken))
        await woken

    @property
    def sleeping(self) -> int:
        return sum(1 for _at, _n, woken in self._sleepers if not woken.done())

    def advance(self) -> None:
        """To the earliest sleeper's time; wake every sleeper due by then."""
        while self._sleepers and self._sleepers[0][2].done():
            heapq.heappop(self._sleepers)  # cancelled
        if not self._sleepers:
            return
        self.t = max(self.t, self._sleepers[0][0])
        while self._sleepers and self._sleepers[0][0] <= self.t:
            _at, _n, woken = heapq.heappop(self._sleepers)
            if not woken.done():
                woken.set_result(None)

    async def drive(self, busy: Callable[[], int], seconds: float = 60.0) -> None:
        """Advance whenever the `busy()` lanes (those with something left to send) all
        sleep on this clock, until none is busy. `seconds` (real time) bounds a hang."""
        deadline = time.monotonic() + seconds
        while (lanes := busy()) > 0:
            assert time.monotonic() < deadline, f"{lanes} lanes still busy"
            if self.sleeping >= lanes:
                self.advance()
                await asyncio.sleep(0)
            else:
                await asyncio.sleep(0.002)  # a lane is sending: wait for it to sleep again
