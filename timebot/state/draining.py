"""A graceful stop for the workers that drain a durable table
(`timebot.state.worker.PollingWorker`): claim nothing more, let the batch already claimed
finish, then stop.

Without it a stop cancels the batch in the middle; its rows stay `working` until their lease
expires and another process (or the next start) takes them over. Draining finishes them here
instead, within a bound: what is not done by then is cancelled and taken over as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import structlog

from plumbing.waiting import wait_for_event

log = structlog.get_logger("timebot.draining")

DRAIN_SECONDS = 10.0
"""How long a stopping process waits for the rows claimed by one kind of worker (the outbox,
then the inbox; with uvicorn's 5 s for open requests, below `timebot serve`'s 30 s)."""


class Draining:
    """Mixed in before a PollingWorker subclass: `class X(Draining, InboxWorker)`."""

    _draining: bool = False
    _in_flight: int = 0
    _idle: asyncio.Event | None = None

    async def run_once(self) -> int:
        return await self._counted(super().run_once)  # type: ignore[misc]

    async def run_express(self) -> int:
        return await self._counted(super().run_express)  # type: ignore[misc]

    async def _counted(self, run: Callable[[], Awaitable[int]]) -> int:
        if self._draining:
            return 0
        if self._idle is None:
            self._idle = asyncio.Event()
        self._in_flight += 1
        self._idle.clear()
        try:
            return await run()
        finally:
            self._in_flight -= 1
            if not self._in_flight:
                self._idle.set()

    async def drain(self, within_s: float) -> bool:
        """Claim nothing more and wait (up to `within_s` seconds) for the batch in hand; then
        stop. True when nothing was cut short."""
        self._draining = True
        finished = True
        if self._in_flight and self._idle is not None:
            finished = await wait_for_event(self._idle, within_s)
        await self.stop()  # type: ignore[attr-defined]
        self._draining = False
        return finished


async def drain_all(workers: Sequence[Any], within_s: float) -> None:
    """Drain these workers side by side (those without `drain` are just stopped)."""

    async def one(worker: Any) -> None:
        if isinstance(worker, Draining):
            if not await worker.drain(within_s):
                log.warning("drain_cut_short", worker=getattr(worker, "name", "?"))
        else:
            await worker.stop()

    await asyncio.gather(*(one(worker) for worker in workers))
