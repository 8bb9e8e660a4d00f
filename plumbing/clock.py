"""The service's notion of now, replaceable by tests (a test clock)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class Clock:
    """Wall clock in Unix milliseconds; `frozen_ms` pins it, `offset_ms` shifts it."""

    frozen_ms: int | None = None
    offset_ms: int = field(default=0)

    def now_ms(self) -> int:
        if self.frozen_ms is not None:
            return self.frozen_ms
        return int(time.time() * 1000) + self.offset_ms

    def set(self, ms: int) -> None:
        self.frozen_ms = ms

    def advance(self, ms: int) -> None:
        if self.frozen_ms is not None:
            self.frozen_ms += ms
        else:
            self.offset_ms += ms


SYSTEM_CLOCK = Clock()
