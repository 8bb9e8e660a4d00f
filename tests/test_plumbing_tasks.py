"""A background task stopped: cancelled and awaited; its cancellation swallowed, another end
logged rather than raised."""

from __future__ import annotations

import asyncio

from structlog.testing import capture_logs

from plumbing.tasks import stop_task


async def test_a_running_task_is_cancelled_and_awaited() -> None:
    ended: list[str] = []

    async def loop() -> None:
        try:
            await asyncio.sleep(3600)
        finally:
            ended.append("ended")

    task = asyncio.create_task(loop())
    await asyncio.sleep(0)
    await stop_task(task)
    assert task.cancelled() and ended == ["ended"]


async def test_no_task_or_a_finished_one_is_nothing_to_stop() -> None:
    async def done() -> None:
        return None

    task = asyncio.create_task(done())
    await task
    with capture_logs() as logs:
        await stop_task(None)
        await stop_task(task)
    assert logs == []


async def test_a_task_that_failed_is_logged_not_raised() -> None:
    async def fails() -> None:
        raise RuntimeError("broken")

    task = asyncio.create_task(fails(), name="the-loop")
    await asyncio.sleep(0)
    with capture_logs() as logs:
        await stop_task(task)
    assert [(entry["event"], entry["task"]) for entry in logs] == [
        ("background_task_failed", "the-loop")]
