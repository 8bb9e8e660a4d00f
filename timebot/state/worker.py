"""A background loop that drains a durable work table: run_once until idle, then wait for a
wake-up or the poll interval. Errors are logged and the loop goes on.

A worker whose table has lanes (timebot.state.lanes) runs an express loop beside it: woken
by `wake_express` (work a person waits for was queued), it claims interactive rows only
(`run_express`) at once, while the main loop may be in the middle of a batch of bulk work. A
receipt then waits for no batch to end, only for a claim."""

from __future__ import annotations

import asyncio
import socket
import uuid

import structlog

from plumbing.tasks import stop_task
from plumbing.urgency import interactive
from plumbing.waiting import wait_for_event

log = structlog.get_logger("timebot.worker")


class PollingWorker:
    name = "worker"

    express = False  # True where `run_express` claims interactive rows only
    # True where everything the worker does is work a person waits on (the inbox's mail):
    # its writes go ahead of bulk work's (plumbing.urgency)
    interactive_work = False

    def __init__(self, poll_seconds: float = 2.0) -> None:
        self.poll_seconds = poll_seconds
        self.owner = f"{socket.gethostname()}:{uuid.uuid4().hex[:8]}"
        self._wake = asyncio.Event()
        self._express_wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._express_task: asyncio.Task[None] | None = None

    async def run_once(self) -> int:
        """Handle what is due now; return how many items were handled."""
        raise NotImplementedError

    async def run_express(self) -> int:
        """Handle the interactive rows due now (where `express`); how many were handled."""
        raise NotImplementedError

    def wake(self) -> None:
        self._wake.set()

    def wake_express(self) -> None:
        """Work a person waits for was queued: claimed now, whatever the main loop does."""
        self._wake.set()
        self._express_wake.set()

    def wake_for(self, interactive: bool) -> None:
        """`wake_express` for work a person waits for, else `wake`."""
        if interactive:
            self.wake_express()
        else:
            self.wake()

    async def _express_loop(self) -> None:
        while True:
            await self._express_wake.wait()
            self._express_wake.clear()
            try:
                with interactive():
                    while await self.run_express():
                        pass
            except Exception:
                log.exception("worker_error", worker=self.name, express=True)

    async def _loop(self) -> None:
        while True:
            try:
                with interactive(self.interactive_work):
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
        if self.express and self._express_task is None:
            self._express_task = asyncio.create_task(self._express_loop(),
                                                     name=f"{self.name}:express")

    async def stop(self) -> None:
        task, self._task = self._task, None
        express, self._express_task = self._express_task, None
        await stop_task(express)
        await stop_task(task)
