"""What a benchmark module returns, and the one line printed per figure."""

from __future__ import annotations

import statistics
import sys
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
