"""Values reused for a few seconds: look-ups that many calls within a second repeat."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")

SWEEP_FLOOR = 256  # entries kept before the first sweep of expired ones


class Recent(Generic[K, V]):
    """A value is returned for `ttl_s` seconds after it was put, then forgotten.

    Expired values are also dropped when the number held has doubled since the last sweep, so
    that what is held is bounded by what was put within the last `ttl_s` (a review fan-out of
    an organisation of 10,000 looks everyone up once: those entries do not stay for good)."""

    def __init__(self, ttl_s: float, now: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self._now = now
        self._values: dict[K, tuple[V, float]] = {}
        self._sweep_at = SWEEP_FLOOR

    def __len__(self) -> int:
        return len(self._values)

    def get(self, key: K) -> V | None:
        found = self._values.get(key)
        if found is None:
            return None
        if self._now() - found[1] >= self.ttl_s:
            del self._values[key]
            return None
        return found[0]

    def put(self, key: K, value: V) -> None:
        now = self._now()
        self._values[key] = (value, now)
        if len(self._values) >= self._sweep_at:
            self._values = {k: held for k, held in self._values.items()
                            if now - held[1] < self.ttl_s}
            self._sweep_at = max(SWEEP_FLOOR, 2 * len(self._values))

    def forget(self, key: K) -> None:
        self._values.pop(key, None)
