"""Stopping a background task (a loop that runs until cancelled): cancelled, awaited until it
has ended, its cancellation swallowed; whatever else it ended with is logged, not raised, so
that the rest of a stop goes on. A stop that is itself cancelled while it waits is cancelled:
the cancellation belongs to whoever stops, and is raised on."""

from __future__ import annotations

import asyncio
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
