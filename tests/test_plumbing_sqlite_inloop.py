"""SQLite on the loop thread (plumbing.sqlite_inloop): writers wait for the write lock without
blocking the loop, inside one process and across processes, and nothing is lost."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from plumbing.db import create_engine, session_factory, unit_of_work


async def _engine(path: Path) -> AsyncEngine:
    engine = create_engine(f"sqlite+aiosqlite:///{path}")
    async with engine.begin() as connection:
        await connection.execute(text("CREATE TABLE counter (id INTEGER PRIMARY KEY, n INT)"))
        await connection.execute(text("INSERT INTO counter VALUES (1, 0)"))
    return engine


async def test_concurrent_writers_in_one_process_each_commit(tmp_path: Path) -> None:
    engine = await _engine(tmp_path / "a.db")
    sessions = session_factory(engine)

    async def add_one() -> None:
        async with unit_of_work(sessions) as session:
            value = await session.scalar(text("SELECT n FROM counter WHERE id = 1"))
            await asyncio.sleep(0)  # another writer gets the loop while this one holds the lock
            await session.execute(text("UPDATE counter SET n = :n WHERE id = 1"),
                                  {"n": value + 1})

    await asyncio.gather(*(add_one() for _ in range(40)))
    async with sessions() as session:
        assert await session.scalar(text("SELECT n FROM counter")) == 40
    await engine.dispose()


async def test_a_failed_transaction_releases_the_write_lock(tmp_path: Path) -> None:
    engine = await _engine(tmp_path / "b.db")
    sessions = session_factory(engine)
    with pytest.raises(RuntimeError):
        async with unit_of_work(sessions) as session:
            await session.execute(text("UPDATE counter SET n = 5"))
            raise RuntimeError("boom")
    async with unit_of_work(sessions) as session:
        await session.execute(text("UPDATE counter SET n = n + 1"))
    async with sessions() as session:
        assert await session.scalar(text("SELECT n FROM counter")) == 1
    await engine.dispose()


async def test_a_writer_of_another_process_is_waited_for_without_blocking_the_loop(
    tmp_path: Path,
) -> None:
    path = tmp_path / "c.db"
    engine = await _engine(path)
    sessions = session_factory(engine)
    locked = threading.Event()

    def other_process_writer() -> None:
        # Another connection outside our pool stands for another process's transaction.
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        other.execute("UPDATE counter SET n = 100")
        locked.set()
        time.sleep(0.5)
        other.execute("COMMIT")
        other.close()

    thread = threading.Thread(target=other_process_writer)
    thread.start()
    await asyncio.to_thread(locked.wait)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticking = asyncio.create_task(ticker())
    async with unit_of_work(sessions) as session:
        await session.execute(text("UPDATE counter SET n = n + 1"))
    ticking.cancel()
    thread.join()
    # The loop kept running while our BEGIN waited for the other writer's lock.
    assert ticks >= 10
    async with sessions() as session:
        assert await session.scalar(text("SELECT n FROM counter")) == 101
    await engine.dispose()


async def test_the_wait_for_another_process_gives_up_after_the_timeout(tmp_path: Path) -> None:
    from plumbing.sqlite_inloop import connector

    path = tmp_path / "d.db"
    engine = await _engine(path)
    await engine.dispose()
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    connection = await connector(str(path), timeout=0.2)()
    try:
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            await connection.execute("BEGIN IMMEDIATE")
        assert not connection.raw.in_transaction
    finally:
        other.execute("ROLLBACK")
        other.close()
        await connection.close()
    # after the failure the process's write lock is free again
    engine = create_engine(f"sqlite+aiosqlite:///{path}")
    async with unit_of_work(session_factory(engine)) as session:
        await session.execute(text("UPDATE counter SET n = 7"))
        assert await session.scalar(select(func.count()).select_from(text("counter"))) == 1
    await engine.dispose()


async def test_a_unit_of_work_that_never_gets_the_lock_fails_as_a_temporary_error(
    tmp_path: Path,
) -> None:
    """The engine's BEGIN IMMEDIATE (run on the driver's cursor, plumbing.db) still fails as
    SQLAlchemy's OperationalError, which the queues retry as temporary; the engine's next
    transaction gets the lock once it is free."""
    from sqlalchemy.exc import OperationalError

    from timebot.state.retry import is_temporary

    path = tmp_path / "e.db"
    await (await _engine(path)).dispose()
    engine = create_engine(f"sqlite+aiosqlite:///{path}", pool_size=1, max_overflow=0)
    async with engine.connect() as connection:  # the pool's one connection waits 0.2 s at most
        raw = await connection.get_raw_connection()
        assert raw.driver_connection is not None
        raw.driver_connection.timeout = 0.2
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(OperationalError, match="locked") as raised:
            async with unit_of_work(session_factory(engine)) as session:
                await session.execute(text("UPDATE counter SET n = 5"))
        assert is_temporary(raised.value)
    finally:
        other.execute("ROLLBACK")
        other.close()
    async with unit_of_work(session_factory(engine)) as session:
        await session.execute(text("UPDATE counter SET n = 6"))
    async with session_factory(engine)() as session:
        assert await session.scalar(text("SELECT n FROM counter")) == 6
    await engine.dispose()


async def test_the_log_is_checkpointed_off_the_loop_and_stays_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Automatic checkpoints are off on our connections; commits that find the log grown past
    the threshold have it checkpointed in a thread, so it is reused instead of growing."""
    from plumbing import sqlite_inloop

    monkeypatch.setattr(sqlite_inloop, "WAL_CHECKPOINT_BYTES", 128 * 1024)
    monkeypatch.setattr(sqlite_inloop, "WAL_CHECK_EVERY", 4)
    path = tmp_path / "log.db"
    engine = await _engine(path)
    async with engine.begin() as connection:
        await connection.execute(text("CREATE TABLE blob (id INTEGER PRIMARY KEY, v TEXT)"))
    sessions = session_factory(engine)
    done_before = sqlite_inloop.checkpoints.done
    for number in range(1000):  # about 4 MB of log without checkpoints
        async with unit_of_work(sessions) as session:
            await session.execute(text("INSERT INTO blob (v) VALUES (:v)"),
                                  {"v": f"{number:04d}" * 1000})
        if number % 50 == 0:
            await asyncio.sleep(0.01)  # let a running checkpoint finish
    wal = path.with_name(path.name + "-wal").stat().st_size
    assert sqlite_inloop.checkpoints.done > done_before
    assert wal < 2 * 1024 * 1024, wal
    async with sessions() as session:
        assert await session.scalar(text("SELECT count(*) FROM blob")) == 1000
    await engine.dispose()
