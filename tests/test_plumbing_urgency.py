"""plumbing.urgency: the scopes of work a person waits on are counted in the process, and bulk
work's turn point (`yield_to_people`) waits while one is open — never longer than its limit,
never for work marked interactive itself."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from plumbing import urgency
from plumbing.urgency import interactive, is_interactive, people_waiting, yield_to_people

# A loop of their own: the suite's shared loop may have a server's work under way meanwhile.
pytestmark = pytest.mark.asyncio(loop_scope="function")

LONG = 30.0  # a limit no test reaches unless it waits for nothing


def _waiters() -> list[asyncio.Future[None]]:
    people = urgency._people()
    assert people is not None
    return people.waiting


@asynccontextmanager
async def a_person_waiting() -> AsyncIterator[None]:
    """Work a person waits on, under way in this event loop (a task of its own) until the block
    ends."""
    opened, release = asyncio.Event(), asyncio.Event()

    async def person() -> None:
        with interactive():
            opened.set()
            await release.wait()

    task = asyncio.create_task(person())
    await opened.wait()
    try:
        yield
    finally:
        release.set()
        await task


async def test_the_scopes_are_counted_and_marked() -> None:
    assert people_waiting() == 0 and not is_interactive()
    with interactive():
        with interactive():
            assert people_waiting() == 2 and is_interactive()
            with interactive(False):  # bulk inside: marked as such, not counted
                assert people_waiting() == 2 and not is_interactive()
        assert people_waiting() == 1
    assert people_waiting() == 0 and not is_interactive()


async def test_a_scope_is_closed_when_what_ran_in_it_fails() -> None:
    with pytest.raises(RuntimeError), interactive():
        raise RuntimeError("boom")
    assert people_waiting() == 0


async def test_bulk_work_goes_on_at_once_when_nobody_waits() -> None:
    await asyncio.wait_for(yield_to_people(LONG), 5)


async def test_bulk_work_waits_until_the_last_person_s_work_ends() -> None:
    async with a_person_waiting():
        async with a_person_waiting():
            bulk = asyncio.create_task(yield_to_people(LONG))
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        assert not bulk.done()  # one person still waits
    await asyncio.wait_for(bulk, 5)
    assert _waiters() == []


async def test_bulk_work_waits_no_longer_than_its_limit() -> None:
    async with a_person_waiting():
        await asyncio.wait_for(yield_to_people(0.01), 5)  # people never stop: bulk goes on
        assert people_waiting() == 1 and _waiters() == []


async def test_work_a_person_waits_on_never_waits_for_itself() -> None:
    with interactive():
        await asyncio.wait_for(yield_to_people(LONG), 5)


async def test_a_cancelled_waiter_leaves_nothing_behind() -> None:
    async with a_person_waiting():
        bulk = asyncio.create_task(yield_to_people(LONG))
        await asyncio.sleep(0.01)
        bulk.cancel()
        with pytest.raises(asyncio.CancelledError):
            await bulk
        assert _waiters() == []


async def test_people_in_another_event_loop_are_theirs() -> None:
    """A loop in another thread (a demo server) counts its own people."""
    inside, leave = threading.Event(), threading.Event()

    async def other_loop_person() -> None:
        with interactive():
            inside.set()
            await asyncio.get_running_loop().run_in_executor(None, leave.wait)

    thread = threading.Thread(target=asyncio.run, args=(other_loop_person(),))
    thread.start()
    try:
        assert await asyncio.get_running_loop().run_in_executor(None, inside.wait, 5)
        assert people_waiting() == 0
        await asyncio.wait_for(yield_to_people(LONG), 5)
    finally:
        leave.set()
        thread.join(5)
