"""A stop is not lost when a wake-up arrives with it: Python 3.11's `asyncio.wait_for`
returned the wake-up and swallowed the cancellation, so a draining `timebot serve` whose
outbox worker was woken as it stopped waited until it was killed."""

from __future__ import annotations

import asyncio

import pytest

from plumbing.waiting import taking_turns, wait_for_event
from timebot.state.draining import Draining
from timebot.state.worker import PollingWorker


class IdleWorker(PollingWorker):
    async def run_once(self) -> int:
        return 0


class DrainingIdleWorker(Draining, IdleWorker):
    pass


async def test_a_cancellation_arriving_with_the_event_is_delivered() -> None:
    event = asyncio.Event()
    waiting = asyncio.ensure_future(wait_for_event(event, 5))
    await asyncio.sleep(0)
    event.set()
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting


async def test_the_event_or_the_time_running_out() -> None:
    event = asyncio.Event()
    assert await wait_for_event(event, 0.01) is False
    event.set()
    assert await wait_for_event(event, 5) is True


@pytest.mark.parametrize("worker_class", [IdleWorker, DrainingIdleWorker])
async def test_a_worker_woken_as_it_stops_stops(worker_class: type[IdleWorker]) -> None:
    for _ in range(50):
        worker = worker_class(poll_seconds=5)
        worker.start()
        await asyncio.sleep(0.001)
        worker.wake()  # work queued at the moment of the stop
        stopping = asyncio.ensure_future(
            worker.drain(1) if isinstance(worker, Draining) else worker.stop()
        )
        done, _ = await asyncio.wait({stopping}, timeout=3)
        assert done, "the worker went on after its stop"
        stopping.result()


async def test_stopping_a_worker_keeps_the_stoppers_own_cancellation() -> None:
    worker = IdleWorker(poll_seconds=5)
    worker.start()
    await asyncio.sleep(0)
    stopping = asyncio.ensure_future(worker.stop())
    await asyncio.sleep(0)
    stopping.cancel()  # the caller is cancelled while it waits for the worker to end
    with pytest.raises(asyncio.CancelledError):
        await stopping


async def test_a_long_loop_gives_other_tasks_a_turn_every_so_many_items() -> None:
    turns = 0
    stop = asyncio.Event()

    async def other_request() -> None:
        nonlocal turns
        while not stop.is_set():
            await asyncio.sleep(0)
            turns += 1

    other = asyncio.create_task(other_request())
    await asyncio.sleep(0)  # the other task is running
    seen_at: list[int] = []
    async for _item in taking_turns(range(1000), every=100):
        seen_at.append(turns)
    stop.set()
    await other
    # Item 0 and 100, 200, … each came after a turn: at most 100 items in a row without one.
    runs = [seen_at.count(value) for value in set(seen_at)]
    assert max(runs) <= 100 and len(runs) >= 10
    assert [item async for item in taking_turns(["a", "b", "c"], every=2)] == ["a", "b", "c"]
