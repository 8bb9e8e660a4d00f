"""A background task stopped: cancelled and awaited; its cancellation swallowed, another end
logged rather than raised."""

from __future__ import annotations

import asyncio

import pytest
from structlog.testing import capture_logs

from plumbing.tasks import BackgroundTasks, stop_task


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


async def test_a_stop_that_is_cancelled_itself_is_cancelled_not_carried_on() -> None:
    """The task cancelled is slow to end; the shutdown waiting for it is cancelled meanwhile:
    that cancellation is the shutdown's own, so the shutdown ends there."""
    async def slow_to_end() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            for _ in range(3):  # its own clean-up, a few turns of the loop
                await asyncio.sleep(0)

    background = asyncio.create_task(slow_to_end())
    await asyncio.sleep(0)
    carried_on: list[str] = []

    async def shutdown() -> None:
        await stop_task(background)
        carried_on.append("after the stop")

    stopping = asyncio.create_task(shutdown())
    await asyncio.sleep(0)
    stopping.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stopping
    assert carried_on == [] and background.cancelled()


async def test_background_tasks_settle_with_those_started_meanwhile_and_stop_the_rest() -> None:
    tasks = BackgroundTasks()
    done: list[str] = []

    async def second() -> None:
        await asyncio.sleep(0)
        done.append("second")

    async def first() -> None:
        await asyncio.sleep(0)
        tasks.start(second(), "second")  # started while settled() waits
        done.append("first")

    tasks.start(first(), "first")
    await tasks.settled()
    assert done == ["first", "second"]

    waiting = tasks.start(asyncio.Event().wait(), "waits")
    await asyncio.sleep(0)
    await tasks.stop()
    assert waiting.cancelled()
    await asyncio.wait_for(tasks.settled(), 1)  # nothing left under way
