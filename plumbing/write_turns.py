"""The turns of one process's writers at an SQLite database (plumbing.sqlite_inloop): a lock
that hands itself to the next writer in arrival order — except that a writer a person waits on
(plumbing.urgency) goes ahead of the others waiting, as Postfix's and Sidekiq's interactive
queues do (issue #40: a receipt's write queued behind a fan-out's and a reminder run's). A
writer that has waited AGE_SECONDS goes next whatever it is, so a steady stream of people never
shuts bulk work out."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass, field

from plumbing.urgency import is_interactive

AGE_SECONDS = 0.5


@dataclass
class _Waiter:
    interactive: bool
    since: float
    granted: asyncio.Future[None] = field(repr=False)


class WriteTurns:
    """asyncio.Lock's acquire/release/locked, with the order above."""

    def __init__(self, age_seconds: float = AGE_SECONDS) -> None:
        self.age_seconds = age_seconds
        self._held = False
        self._waiting: deque[_Waiter] = deque()

    def locked(self) -> bool:
        return self._held

    def waiting(self) -> int:
        """How many writers wait for their turn."""
        return sum(not waiter.granted.done() for waiter in self._waiting)

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, *exc: object) -> None:
        self.release()

    async def acquire(self) -> bool:
        if not self._held and not self._waiting:
            self._held = True
            return True
        waiter = _Waiter(is_interactive(), time.monotonic(),
                         asyncio.get_running_loop().create_future())
        self._waiting.append(waiter)
        try:
            await waiter.granted
        except asyncio.CancelledError:
            if waiter in self._waiting:
                self._waiting.remove(waiter)
            elif waiter.granted.done() and not waiter.granted.cancelled():
                self.release()  # handed over as it was cancelled: pass it on
            raise
        return True

    def release(self) -> None:
        if not self._held:
            raise RuntimeError("WriteTurns released while not held")
        following = self._next()
        if following is None:
            self._held = False
            return
        following.granted.set_result(None)  # held on its behalf from now on

    def _next(self) -> _Waiter | None:
        """The oldest waiter once it waited AGE_SECONDS, else the first interactive one, else
        the oldest; None when nobody waits."""
        while self._waiting and self._waiting[0].granted.done():
            self._waiting.popleft()  # cancelled while waiting
        if not self._waiting:
            return None
        chosen = self._waiting[0]
        if not chosen.interactive and time.monotonic() - chosen.since < self.age_seconds:
            chosen = next((w for w in self._waiting
                           if w.interactive and not w.granted.done()), chosen)
        self._waiting.remove(chosen)
        return chosen
