"""Jobs that must run in one process at a time, whichever of several processes (the workers
of `timebot serve --workers N`, or replicas on one PostgreSQL) share the bot's database.

Every process registers the same jobs (`add`: a name, how to start it, how to stop it) and
runs a `SingletonJobs` loop. The loop holds one named lease in `scheduler_leases` (the
`singleton-jobs` row): the process that holds it runs every job, the others run none and try
again every `renew_seconds`. The holder renews the lease (a heartbeat) every `renew_seconds`
for `lease_seconds`; when it dies (SIGKILL, a crash, a lost machine) the lease expires and
another process takes it over within `lease_seconds + renew_seconds`, starting the jobs
there. A holder stopped cleanly releases it, so a successor starts the jobs at once.

A holder that cannot renew (the database away) stops its jobs once its lease may have
expired, so two processes never run the jobs at once for longer than one renewal's latency;
the jobs themselves stay safe to overlap (dedupe keys, claims), this only keeps them from
doing their work twice.

Times are the wall clock (`time.time`), not the runtime's clock: a test clock that jumps must
not expire a live process's lease.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from plumbing.tasks import stop_task
from timebot.state.lease import new_owner, release_lease, take_lease

log = structlog.get_logger("timebot.singleton")

LEASE_NAME = "singleton-jobs"
LEASE_SECONDS = 10.0
RENEW_SECONDS = 2.0

Start = Callable[[], Awaitable[None] | None]
Stop = Callable[[], Awaitable[None] | None]


async def _call(step: Start | Stop) -> None:
    result = step()
    if result is not None:
        await result


@dataclass
class _Job:
    name: str
    start: Start
    stop: Stop


class SingletonJobs:
    """The jobs of this process that run only while it holds the lease."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        *,
        name: str = LEASE_NAME,
        lease_seconds: float = LEASE_SECONDS,
        renew_seconds: float = RENEW_SECONDS,
    ) -> None:
        self.sessions = sessions
        self.name = name
        self.lease_ms = int(lease_seconds * 1000)
        self.renew_seconds = renew_seconds
        self.owner = new_owner()
        self.jobs: list[_Job] = []
        self.held = False
        self._held_until_ms = 0
        self._task: asyncio.Task[None] | None = None

    def add(self, name: str, start: Start, stop: Stop) -> None:
        """Register a job (before `start`): started when this process takes the lease, stopped
        when it loses it or stops."""
        self.jobs.append(_Job(name, start, stop))

    def start(self) -> None:
        if self._task is None and self.jobs:
            self._task = asyncio.create_task(self._loop(), name="singleton-jobs")

    async def stop(self) -> None:
        if self._task is None:
            return
        await stop_task(self._task)
        self._task = None
        if self.held:
            await self._stop_jobs("stopping")
            try:
                await release_lease(self.sessions, self.name, self.owner)
            except Exception:  # the database is away: the lease expires by itself
                log.warning("singleton_lease_not_released", owner=self.owner)

    async def _loop(self) -> None:
        while True:
            await self.beat()
            await asyncio.sleep(self.renew_seconds)

    async def beat(self) -> None:
        """One heartbeat: take or renew the lease; start or stop the jobs accordingly."""
        now_ms = int(time.time() * 1000)
        try:
            holds = await take_lease(
                self.sessions, self.name, self.owner, now_ms, self.lease_ms
            )
        except Exception as error:  # the database away for a moment
            log.warning("singleton_lease_unknown", error=str(error), held=self.held)
            if self.held and now_ms >= self._held_until_ms:
                await self._stop_jobs("lease expired unrenewed")
            return
        if holds:
            self._held_until_ms = now_ms + self.lease_ms
            if not self.held:
                await self._start_jobs()
        elif self.held:
            await self._stop_jobs("lease taken by another process")

    async def _start_jobs(self) -> None:
        self.held = True
        log.info("singleton_jobs_taken", owner=self.owner, pid=os.getpid(),
                 jobs=[job.name for job in self.jobs])
        for job in self.jobs:
            try:
                await _call(job.start)
            except Exception:
                log.exception("singleton_job_start_failed", job=job.name)

    async def _stop_jobs(self, why: str) -> None:
        self.held = False
        log.info("singleton_jobs_released", owner=self.owner, pid=os.getpid(), why=why)
        for job in reversed(self.jobs):
            try:
                await _call(job.stop)
            except Exception:
                log.exception("singleton_job_stop_failed", job=job.name)
