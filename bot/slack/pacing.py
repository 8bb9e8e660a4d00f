"""Slack's limits as send slots: about one message per second per channel, a workspace-wide
rate for all channels together, and a pause for everyone after a 429.

The pace is kept on a `PaceClock`: real time (`MonotonicClock`) in production, where Slack's
limits are; a test may hand a clock it moves itself, so that the pace a test checks is the one
the sender kept, not the network's jitter on a loaded machine."""

from __future__ import annotations

import asyncio
import dataclasses
import math
import time
from dataclasses import dataclass
from typing import Protocol


@dataclass
class RateLimits:
    """Seconds between two messages to one channel, messages per second overall, channels sent
    to at once, and how long one Web API call may take before it is given up (and retried)."""

    per_channel_interval: float = 1.1  # a margin over Slack's one per second
    workspace_per_second: float = 8.0
    concurrency: int = 256
    call_timeout: float = 30.0

    def shared_by(self, processes: int) -> RateLimits:
        """The limits of one of `processes` processes sending for the same workspaces (the
        workers of `timebot serve --workers N`, each with its own pacer): the workspace's rate
        split evenly, so that together they keep it. A channel's pace is not split: within a
        process a channel's rows go one after another (its lane), but the sender's claims have
        no lanes, so two processes may each hold a row of one channel and send them closer
        together than `per_channel_interval` (Slack allows a channel short bursts)."""
        return dataclasses.replace(
            self, workspace_per_second=self.workspace_per_second / max(1, processes))


def bulk_at_once(limits: RateLimits) -> int:
    """Bulk calls (timebot.state.lanes) under way at once: about a second of the workspace's
    rate, so that bulk keeps the pace while an interactive call finds at most that many
    ahead of it at its channel's first slot."""
    return max(1, min(limits.concurrency, math.ceil(limits.workspace_per_second)))


class PaceClock(Protocol):
    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class MonotonicClock:
    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class Pacer:
    """Hands out send slots: per channel and workspace-wide; a 429 pauses everything."""

    def __init__(self, limits: RateLimits, clock: PaceClock | None = None) -> None:
        self.limits = limits
        self.clock: PaceClock = clock or MonotonicClock()
        self._channel_next: dict[str, float] = {}
        # A DM posted to a user id lands in their IM channel: both are one channel.
        self.aliases: dict[str, str] = {}
        self._global_next = 0.0
        self._interactive_slots = 0  # booked so far (bulk calls count those passing them)
        self._paused_until = 0.0

    async def slot(self, channel: str, *, bulk: bool = False) -> None:
        """Wait until `channel` may get a message: its own pace first, then the next
        workspace-wide slot, handed out first come, first served. Each waiter sleeps until
        its own slot (a herd of waiters all waking at every slot to find it taken would cost
        more CPU than the sending). A 429 meanwhile (pause) sends it back to the queue.

        A `bulk` call books no slot ahead: it takes one only when the next is free now, and
        otherwise sleeps until then and asks again, so that an interactive call asking later
        waits for at most one bulk call, not for every one queued before it (the sender lets
        a few bulk calls ask at once: `bulk_at_once`). Once a second's worth of interactive
        calls went ahead of it, it books as they do: bulk never starves."""
        interval = self.limits.per_channel_interval
        spacing = 1.0 / self.limits.workspace_per_second
        clock = self.clock
        passed_over = self._interactive_slots
        while True:
            key = self.aliases.get(channel, channel)
            now = clock.now()
            ready = max(self._paused_until, self._channel_next.get(key, 0.0))
            if bulk and (self._interactive_slots - passed_over
                         < self.limits.workspace_per_second):
                ready = max(ready, self._global_next)
            if ready > now:
                await clock.sleep(ready - now)
                continue
            start = max(now, self._global_next)
            self._global_next = start + spacing
            if not bulk:
                self._interactive_slots += 1
            if start > now:
                await clock.sleep(start - now)
                key = self.aliases.get(channel, channel)
                now = clock.now()
                if max(self._paused_until, self._channel_next.get(key, 0.0)) > now:
                    continue  # paused, or its channel used (through an alias) meanwhile
            self._channel_next[key] = now + interval
            return

    def alias(self, channel: str, same_as: str) -> None:
        """`channel` (a user id) is `same_as` (their IM channel): one pace for both."""
        if self.aliases.get(channel) == same_as:
            return
        self.aliases[channel] = same_as
        if channel in self._channel_next:
            self._channel_next[same_as] = max(self._channel_next.pop(channel),
                                              self._channel_next.get(same_as, 0.0))

    def pause(self, seconds: float) -> None:
        self._paused_until = max(self._paused_until, self.clock.now() + seconds)
