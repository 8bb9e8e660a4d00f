"""The turns of one process's SQLite writers (plumbing.write_turns): in arrival order, except
that a writer a person waits on (plumbing.urgency) goes ahead of those waiting; one that has
waited AGE_SECONDS goes next whatever it is; a waiter cancelled before or after its turn came
loses nobody's turn. Then the same through SQLAlchemy on a real SQLite file."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import text

from plumbing.db import create_engine, session_factory, unit_of_work
from plumbing.sqlite_inloop import write_turns_at
from plumbing.urgency import interactive, is_interactive
from plumbing.write_turns import WriteTurns


class Turns:
    """Waiters queued behind a held lock, each recording when its turn came."""

    def __init__(self, turns: WriteTurns) -> None:
        self.turns = turns
        self.order: list[str] = []
        self.tasks: dict[str, asyncio.Task[None]] = {}

    async def queue(self, name: str, *, person: bool = False) -> None:
        async def wait() -> None:
            with interactive(person):
                async with self.turns:
                    self.order.append(name)
        self.tasks[name] = asyncio.get_running_loop().create_task(wait())
        await asyncio.sleep(0)  # queued now, in this order

    @classmethod
    async def behind(cls, turns: WriteTurns, *names: str) -> Turns:
        """`names` queued, in this order, behind the lock taken now."""
        await turns.acquire()
        waiting = cls(turns)
        for name in names:
            await waiting.queue(name)
        return waiting

    async def run_out(self) -> list[str]:
        self.turns.release()
        await asyncio.gather(*self.tasks.values(), return_exceptions=True)
        return self.order


async def test_writers_take_turns_in_arrival_order() -> None:
    turns = WriteTurns()
    waiting = await Turns.behind(turns, "a", "b", "c")
    assert await waiting.run_out() == ["a", "b", "c"]
    assert not turns.locked()


async def test_a_person_s_writer_goes_ahead_of_those_waiting() -> None:
    waiting = await Turns.behind(WriteTurns(), "fan-out 1", "fan-out 2")
    await waiting.queue("receipt", person=True)
    await waiting.queue("fan-out 3")
    assert await waiting.run_out() == ["receipt", "fan-out 1", "fan-out 2", "fan-out 3"]


async def test_a_writer_that_waited_long_enough_goes_first_whatever_it_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    waiting = await Turns.behind(WriteTurns(age_seconds=0.5), "reminders")
    now[0] += 0.5
    await waiting.queue("receipt", person=True)
    assert await waiting.run_out() == ["reminders", "receipt"]


async def test_a_cancelled_waiter_loses_nobody_s_turn() -> None:
    turns = WriteTurns()
    waiting = await Turns.behind(turns, "gone", "next")
    waiting.tasks["gone"].cancel()
    await asyncio.sleep(0)
    assert await waiting.run_out() == ["next"]
    assert not turns.locked()

    # Cancelled after its turn came, before it ran: the turn passes on.
    waiting = await Turns.behind(turns, "handed", "after")
    turns.release()  # "handed" is granted the lock …
    waiting.tasks["handed"].cancel()  # … and cancelled before it runs
    await asyncio.gather(*waiting.tasks.values(), return_exceptions=True)
    assert waiting.order == ["after"]
    assert not turns.locked()


async def test_a_person_s_transaction_commits_before_queued_bulk_ones(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'turns.db'}")
    async with engine.begin() as connection:
        await connection.execute(text("CREATE TABLE done (n INTEGER PRIMARY KEY, what TEXT)"))
    sessions = session_factory(engine)
    release = asyncio.Event()

    async def write(what: str, *, person: bool = False, hold: bool = False) -> None:
        with interactive(person):
            assert is_interactive() is person
            async with unit_of_work(sessions) as session:
                await session.execute(text("INSERT INTO done (what) VALUES (:w)"), {"w": what})
                if hold:
                    await release.wait()

    turns = write_turns_at(str(tmp_path / "turns.db"))

    async def until(condition: Callable[[], bool]) -> None:
        for _ in range(10_000):
            if condition():
                return
            await asyncio.sleep(0.001)
        raise AssertionError("the writers did not queue")

    async def queued(count: int) -> None:
        await until(lambda: turns.waiting() >= count)

    loop = asyncio.get_running_loop()
    holder = loop.create_task(write("batch", hold=True))
    await until(turns.locked)
    bulk = []
    for n in range(3):
        bulk.append(loop.create_task(write(f"bulk {n}")))
        await queued(n + 1)
    receipt = loop.create_task(write("receipt", person=True))
    await queued(4)
    release.set()
    await asyncio.gather(holder, *bulk, receipt)
    async with sessions() as session:
        order = list(await session.scalars(text("SELECT what FROM done ORDER BY n")))
    assert order == ["batch", "receipt", "bulk 0", "bulk 1", "bulk 2"]
    await engine.dispose()
