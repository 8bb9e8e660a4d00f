"""Nudges in Slack: the loop that applies the schedules with the business clock, every
`interval` seconds (`tick()`), in one process at a time (timebot/state/singleton.py).

- Approvers (bot.slack.approver_nudges): a nudge per waiting request, or one daily digest; snooze
  and off switch in bot.slack.nudge_preferences.
- Staff (bot.slack.staff_nudges): a nudge with "Submit now" at the end of their period.
- Managers remind their team on demand: `/timesheet remind` (bot.slack.team_reminders).

The schedules themselves are pure functions (bot.chat.nudge_schedule).
"""

from __future__ import annotations

import asyncio
import random

import structlog

from bot.slack.approver_nudges import ApproverNudges
from bot.slack.deps import SlackDeps
from bot.slack.staff_nudges import StaffNudges
from plumbing.tasks import stop_task

log = structlog.get_logger("timebot.slack.nudges")

DISCOVER_SECONDS = 3600.0  # how often the workspace's members are matched to people


class NudgesPart:
    def __init__(self, deps: SlackDeps, interval_seconds: float = 60.0,
                 ticks: asyncio.Semaphore | None = None) -> None:
        self.deps = deps
        # Shared by every installation's loop of the process (bot.slack.component): at most a few
        # ticks at once, whatever the number of workspaces (#27).
        self.ticks = ticks or asyncio.Semaphore(1)
        self.interval_seconds = interval_seconds
        self.approvers = ApproverNudges(deps)
        self.staff = StaffNudges(deps)
        self._task: asyncio.Task[None] | None = None
        self._discovered_at: float | None = None
        self.discover_every = DISCOVER_SECONDS
        # Each installation's loop ticks at its own point of the interval: 100 workspaces in
        # one process do not all read the service and Slack in the same second (#27).
        self.phase = random.random()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name="slack-nudges")

    async def stop(self) -> None:
        if self._task is not None:
            await stop_task(self._task)
            self._task = None

    async def _loop(self) -> None:
        delay = self.interval_seconds * (1.0 + self.phase)
        while True:
            await asyncio.sleep(delay)
            delay = self.interval_seconds
            try:
                async with self.ticks:
                    await self.tick()
            except Exception:  # the service or Slack away for a moment: next tick
                log.exception("nudge_tick_failed")

    async def tick(self) -> None:
        """Nothing while the app is uninstalled or the workspace serves no organisation."""
        organisation_id = await self.deps.workspace.organisation_id()
        if organisation_id is None or not await self.deps.workspace.active():
            return
        clock = self.deps.runtime.clock
        await self.approvers.run(clock.now_ms(), organisation_id)
        now = clock.now_ms()
        await self._discover()  # staff are nudged once matched to a Slack user
        await self.staff.run(now, organisation_id)

    async def _discover(self) -> None:
        loop = asyncio.get_running_loop()
        if self._discovered_at is None or loop.time() - self._discovered_at >= self.discover_every:
            await self.deps.identity.discover()
            self._discovered_at = loop.time()
