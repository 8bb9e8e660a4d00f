"""How the bot spares a tenant's Microsoft Graph that refuses or throttles it, per tenant and
endpoint (what is asked: the automatic replies, the presence, an app installation): until the
endpoint first answered in the tenant its calls go one at a time, so a tenant without the
permission costs one refused call, not one per user; a refusal (403) quiets it for the tenant
for `quiet_seconds`, a 429 for its Retry-After. Once it answered, a 403 is that user's (an
access policy) or the consent withdrawn: probed again one at a time, and a second refusal in a
row quiets it. Used by bot.teams.away_status and bot.teams.installs."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from bot.teams.graph import GraphError

THROTTLED_SECONDS = 30.0  # a 429 without Retry-After

T = TypeVar("T")
GateKey = tuple[str, str]  # (tenant id, endpoint)


class GraphGate:
    def __init__(self, quiet_seconds: float, unreachable_seconds: float | None = None) -> None:
        """`unreachable_seconds`: how long Graph unreachable or timing out (status 0) quiets
        the tenant's endpoint (None: not at all, the next call tries again)."""
        self.quiet_seconds, self.unreachable_seconds = quiet_seconds, unreachable_seconds
        self._quiet: dict[GateKey, float] = {}  # not before
        self._answered: set[GateKey] = set()
        self._probes: dict[GateKey, asyncio.Lock] = {}

    def is_quiet(self, key: GateKey) -> bool:
        return self._quiet.get(key, 0.0) > time.monotonic()

    async def call(self, key: GateKey, call: Callable[[], Awaitable[T]]) -> T | None:
        """The call's answer; None when the endpoint is quiet in the tenant (not called). A
        GraphError is raised on, after the gate noted what it means."""
        if key in self._answered:
            return await self._call(key, call)
        async with self._probes.setdefault(key, asyncio.Lock()):
            return await self._call(key, call)

    async def _call(self, key: GateKey, call: Callable[[], Awaitable[T]]) -> T | None:
        if self.is_quiet(key):
            return None
        try:
            answer = await call()
        except GraphError as error:
            if error.status == 403 and key in self._answered:
                self._answered.discard(key)
            elif error.status == 403:
                self._quiet[key] = time.monotonic() + self.quiet_seconds
            elif error.status == 0 and self.unreachable_seconds is not None:
                self._quiet[key] = time.monotonic() + self.unreachable_seconds
            elif error.status == 429:
                self._quiet[key] = time.monotonic() + (
                    error.retry_after if error.retry_after is not None else THROTTLED_SECONDS)
            raise
        self._answered.add(key)
        self._probes.pop(key, None)
        return answer
