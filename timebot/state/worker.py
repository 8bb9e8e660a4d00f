"""A background loop that drains a durable work table: run_once until idle, then wait for a
wake-up or the poll interval. Errors are logged and the loop goes on."""

from __future__ import annotations

import asyncio
import socket
import uuid

import structlog

from plumbing.tasks import stop_task
from plumbing.waiting import wait_for_event

log = structlog.get_logger("timebot.worker")


class PollingWorker:
    name = "worker"

    def __init__(self, poll_seconds: float = 2.0) -> None:
        self.poll_seconds = poll_seconds
        self.owner = f"{socket.gethostname()}:{uuid.uuid4().hex[:8]}"
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def run_once(self) -> int:
        """Handle what is due now; return how many items were handled."""
        raise NotImplementedError

    def wake(self) -> None:
        self._wake.set()

    async def _loop(self) -> None:
        while True:
            try:
                handled = await self.run_once()
            except Exception:  # e.g. the database went away for a moment
                log.exception("worker_error", worker=self.name)
                handled = 0
            if handled:
                continue
            self._wake.clear()
            await wait_for_event(self._wake, self.poll_seconds)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name=self.name)

    async def stop(self) -> None:
        task, self._task = self._task, None
        await stop_task(task)
