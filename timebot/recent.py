"""Values reused for a few seconds: look-ups that many calls within a second repeat."""

from __future__ import annotations

import time
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Recent(Generic[K, V]):
    """A value is returned for `ttl_s` seconds after it was put, then forgotten."""

    def __init__(self, ttl_s: float) -> None:
        self.ttl_s = ttl_s
        self._values: dict[K, tuple[V, float]] = {}

    def get(self, key: K) -> V | None:
        found = self._values.get(key)
        if found is None:
            return None
        if time.monotonic() - found[1] >= self.ttl_s:
            del self._values[key]
            return None
        return found[0]

    def put(self, key: K, value: V) -> None:
        self._values[key] = (value, time.monotonic())

    def forget(self, key: K) -> None:
        self._values.pop(key, None)
