"""What a benchmark module returns, and the one line printed per figure."""

from __future__ import annotations

import asyncio
import gc
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class Figure:
    name: str
    value: float
    unit: str
    baseline: float

    @property
    def ratio(self) -> float:
        return self.value / self.baseline if self.baseline else float("inf")

    def line(self) -> str:
        return (
            f"bench {self.name} {self.value:.3f} {self.unit} "
            f"baseline {self.baseline:.3f} ratio {self.ratio:.3f}"
        )


def median(values: list[float]) -> float:
    return float(statistics.median(values))


def note(message: str) -> None:
    """Progress and details: stderr, never the figure lines."""
    print(message, file=sys.stderr, flush=True)


@contextmanager
def collector_paused() -> Iterator[None]:
    """The load generator's own garbage collector off while it times requests: after it has
    parsed answers of 10,000 people, a full collection of its heap takes ~100 ms, which a
    request timed across it would count as the server's latency."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


async def at_rate(count: int, rate: float, one: Callable[[int], Awaitable[None]]) -> None:
    """Open loop: `one(n)` started for n = 0 … count-1, one every 1/rate s whatever the earlier
    ones take, all awaited."""
    tasks = []
    origin = time.perf_counter()
    for number in range(count):
        delay = origin + number / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.ensure_future(one(number)))
    await asyncio.gather(*tasks)
