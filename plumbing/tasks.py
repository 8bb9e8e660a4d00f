"""Stopping a background task (a loop that runs until cancelled): cancelled, awaited until it
has ended, its cancellation swallowed; whatever else it ended with is logged, not raised, so
that the rest of a stop goes on. A stop that is itself cancelled while it waits is cancelled:
the cancellation belongs to whoever stops, and is raised on."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import structlog

log = structlog.get_logger("timebot.tasks")


async def stop_task(task: asyncio.Task[Any] | None) -> None:
    if task is None:
        return
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise
    except Exception:
        log.exception("background_task_failed", task=task.get_name())


class BackgroundTasks:
    """Short tasks started and not awaited by whoever starts them (a check, an installation),
    kept referenced until they end (asyncio keeps only a weak reference to a running task)."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def start(self, work: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        task = asyncio.create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def settled(self) -> None:
        """Wait until none is under way, those started meanwhile included."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def stop(self) -> None:
        """Cancel those under way and wait until they have ended."""
        tasks, self._tasks = list(self._tasks), set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
