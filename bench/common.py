"""What a benchmark module returns, and the one line printed per figure."""

from __future__ import annotations

import gc
import statistics
import sys
from collections.abc import Iterator
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
