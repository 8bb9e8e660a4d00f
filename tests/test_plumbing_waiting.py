"""A stop is not lost when a wake-up arrives with it: Python 3.11's `asyncio.wait_for`
returned the wake-up and swallowed the cancellation, so a draining `timebot serve` whose
outbox worker was woken as it stopped waited until it was killed."""

from __future__ import annotations

import asyncio

import pytest

from plumbing.waiting import wait_for_event
from timebot.draining import Draining
from timebot.worker import PollingWorker


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
