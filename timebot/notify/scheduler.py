"""The scheduler: each tick, the end-of-period reminders due in every organisation, the passes
registered with it (the escalations of timebot.notify.escalation_tick) and the daily digests,
sent through the channels registered with it (mail's, by its install).

Several timebot processes may share one database: a lease (`scheduler_leases`) lets one of
them run a tick at a time, and every notification carries a dedupe key (person, period), so
each reminder goes out exactly once even should two ticks overlap after a lease expired.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable

import structlog

from plumbing.waiting import wait_for_event
from timebot.notify.decisions import Channel
from timebot.notify.due_reports import ReportChannel, due_reports
from timebot.notify.ground import Ground
from timebot.notify.period_reminders import Quiet, due_period_reminders
from timebot.state.lease import acquire_lease
from timebot.state.worker import PollingWorker

log = structlog.get_logger("timebot.scheduler")

LEASE_MS = 5 * 60_000
QUIET_AT_MOST_MS = 10 * 60_000


class Scheduler(PollingWorker):
    """Ticks every `poll_seconds` (wall clock); each tick does what is due by the runtime's
    clock (a test clock that jumps ahead is honoured at the next tick)."""

    name = "scheduler"
    LEASE = "scheduler"

    def __init__(self, runtime: Ground, poll_seconds: float = 60.0) -> None:
        super().__init__(poll_seconds)
        self.runtime = runtime
        self.channels: list[Channel] = []
        self.report_channels: list[ReportChannel] = []
        # Further passes over each organisation each tick (the escalations'), queued counts.
        self.passes: list[Callable[[str], Awaitable[int]]] = []
        # True when it runs as one of the process's singleton jobs (timebot/state/singleton.py):
        # that lease already makes it the only one, and is taken over within seconds of its
        # holder's death, where this tick lease would wait LEASE_MS.
        self.gated = False
        # Per organisation: (when its last period-reminder pass ran, until when no pass can
        # find anything new), by the runtime's clock.
        self._quiet: dict[str, tuple[int, int]] = {}

    def add_channel(self, channel: Channel) -> None:
        self.channels.append(channel)

    def add_report_channel(self, channel: ReportChannel) -> None:
        """A way of sending due saved reports (mail's e-mail, the bot's DM)."""
        self.report_channels.append(channel)

    async def period_reminders(self, organisation_id: str) -> int:
        """The end-of-period reminders due now in one organisation; returns how many were
        queued. Notes until when the next pass could find none that this one did not."""
        now = self.runtime.clock.now_ms()
        quiet = Quiet(now + QUIET_AT_MOST_MS)
        sent = 0
        for channel in self.channels:
            reminders = due_period_reminders(self.runtime, organisation_id, channel.sent_among,
                                             quiet)
            async with contextlib.aclosing(reminders), channel.bulk():
                async for reminder in reminders:
                    sent += await channel.period_reminder(reminder)
        self._quiet[organisation_id] = (now, quiet.until_ms)
        return sent

    async def period_reminders_when_any_can_be_due(self, organisation_id: str) -> int:
        """`period_reminders`, skipped until the moment the last pass found the next reminder
        due (at most QUIET_AT_MOST_MS after it: a setting changed meanwhile is seen by then;
        a reminder stays due for two days). A clock set back looks again."""
        now = self.runtime.clock.now_ms()
        passed_ms, until_ms = self._quiet.get(organisation_id, (0, 0))
        if passed_ms <= now < until_ms:
            return 0
        return await self.period_reminders(organisation_id)

    async def due_reports(self, organisation_id: str) -> int:
        """The saved reports due now in one organisation, to every channel that sends them
        (each queues an occurrence once, by its key)."""
        sent = 0
        if self.report_channels:
            async for due in due_reports(self.runtime, organisation_id):
                for channel in self.report_channels:
                    sent += await channel.due_report(due)
        return sent

    async def run_once(self) -> int:
        runtime = self.runtime
        if not self.gated and not await acquire_lease(
            runtime.state_sessions, runtime.clock, self.LEASE, self.owner, LEASE_MS
        ):
            return 0
        sent = 0
        for organisation_id in await runtime.directory.organisation_ids():
            try:
                sent += await self.period_reminders_when_any_can_be_due(organisation_id)
            except Exception:  # one organisation's failure does not stop the others
                log.exception("period_reminders_failed", organisation=organisation_id)
            try:
                sent += await self.due_reports(organisation_id)
            except Exception:
                log.exception("due_reports_failed", organisation=organisation_id)
            for each in self.passes:
                try:
                    sent += await each(organisation_id)
                except Exception:
                    log.exception("scheduler_pass_failed", organisation=organisation_id)
        for channel in self.channels:
            sent += await channel.daily_digests()
        return sent

    async def _loop(self) -> None:  # a tick, then wait: run_once never asks for more
        while True:
            try:
                await self.run_once()
            except Exception:
                log.exception("scheduler_tick_failed")
            self._wake.clear()
            await wait_for_event(self._wake, self.poll_seconds)
