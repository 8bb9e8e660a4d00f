"""SQLite run on the event loop's own thread, for SQLAlchemy's async engine.

aiosqlite gives each connection a thread and hands every call (cursor, execute, fetch, close)
over a queue to it and back: on a small machine that hand-off costs four times the statement
itself (a primary-key read: 1.6 ms through aiosqlite, 0.35 ms called directly). Our SQLite
statements are index lookups of microseconds, so here they run directly on the loop thread,
behind the same `sqlite+aiosqlite` dialect (`async_creator`), and the only waiting that is
left — for SQLite's write lock — is done asynchronously instead of in a busy handler:

- writers of one process queue on a lock per database file (plumbing.write_turns: in
  arrival order, a writer a person waits on first), taken before `BEGIN IMMEDIATE` and
  released when the transaction ends, so a writer never blocks the loop waiting for another
  coroutine's transaction;
- a writer of another process holding the lock makes `BEGIN` fail at once (busy_timeout 0);
  the statement is retried after an asynchronous back-off until `timeout` seconds have passed,
  then SQLite's "database is locked" is raised as before.

The price: a long statement (a count over a million rows) holds the loop while it runs.

WAL checkpoints — copying the log back into the database file, and its fsync — would also run
on the loop (SQLite runs them inside the commit that crosses 1000 pages: 5-20 ms each under
load). Automatic checkpoints are off; a commit that finds the log past WAL_CHECKPOINT_BYTES
has it checkpointed and truncated in a worker thread, on a connection of its own, while the
process's writers wait for the write lock (the loop itself goes on; SQLite releases the GIL
while it copies).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from collections.abc import Iterable
from typing import Any

from plumbing.write_turns import WriteTurns

_BUSY_FIRST_PAUSE = 0.001
_BUSY_MAX_PAUSE = 0.01  # a writer of another process gets the lock within ~10 ms of its release

WAL_CHECKPOINT_BYTES = 4 * 1024 * 1024  # about SQLite's own default of 1000 pages
WAL_CHECK_EVERY = 32  # commits between looks at the log's size

_write_locks: dict[tuple[int, str], WriteTurns] = {}


class _Checkpoints:
    """Per database file: when its log has grown, one checkpoint at a time, in a thread, while
    this process's writers wait on the write lock (the loop goes on). Without writers it
    completes and truncates the log; with writers appending meanwhile a log would never be
    caught up, so never restarted, and would grow for good."""

    def __init__(self) -> None:
        self.commits: dict[str, int] = {}
        self.running: set[str] = set()
        self.done = 0  # checkpoints completed (tests)

    def after_commit(self, path: str) -> None:
        count = self.commits.get(path, 0) + 1
        self.commits[path] = count
        if count % WAL_CHECK_EVERY or path in self.running or path == ":memory:":
            return
        try:
            size = os.stat(path + "-wal").st_size
        except OSError:
            return
        if size < WAL_CHECKPOINT_BYTES:
            return
        self.running.add(path)
        task = asyncio.get_running_loop().create_task(self._run(path))
        task.add_done_callback(lambda done: done.cancelled() or done.exception())

    async def _run(self, path: str) -> None:
        try:
            async with write_turns_at(path):
                await asyncio.get_running_loop().run_in_executor(None, _checkpoint, path)
            self.done += 1
        finally:
            self.running.discard(path)


def _checkpoint(path: str) -> None:
    # timeout 0: a reader still on the log (or another process) makes it a partial
    # checkpoint instead of a wait; the next one finishes the job.
    connection = sqlite3.connect(path, isolation_level=None, timeout=0)
    try:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        connection.close()


checkpoints = _Checkpoints()


def write_turns_at(path: str) -> WriteTurns:
    """The turns of this loop's writers at the database file `path`."""
    key = (id(asyncio.get_running_loop()), path)
    lock = _write_locks.get(key)
    if lock is None:
        lock = _write_locks[key] = WriteTurns()
    return lock


def _is_busy(error: sqlite3.OperationalError) -> bool:
    text = str(error).lower()
    return "database is locked" in text or "database is busy" in text


def _begins_write(sql: str) -> bool:
    head = sql.lstrip()[:32].upper()
    return head.startswith("BEGIN") and ("IMMEDIATE" in head or "EXCLUSIVE" in head)


class Cursor:
    """aiosqlite's cursor interface over a sqlite3 cursor; nothing here suspends except the
    waits for the write lock."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._cursor = connection.raw.cursor()
        # The sqlite3 cursor's, copied after each statement (only a statement changes them):
        # plain attributes, read several times a statement, where properties were calls.
        self.description: Any = None
        self.rowcount = -1
        self.lastrowid: int | None = None

    async def __aenter__(self) -> Cursor:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def arraysize(self) -> int:
        return self._cursor.arraysize

    @arraysize.setter
    def arraysize(self, value: int) -> None:
        self._cursor.arraysize = value

    async def execute(self, sql: str, parameters: Any = ()) -> Cursor:
        return await self._run(self._cursor.execute, sql, parameters)

    async def executemany(self, sql: str, parameters: Iterable[Any]) -> Cursor:
        return await self._run(self._cursor.executemany, sql, parameters)

    async def _run(self, call: Any, sql: str, parameters: Any) -> Cursor:
        cursor = self._cursor
        try:
            await self._connection.run(call, sql, parameters)
        finally:
            self.description = cursor.description
            self.rowcount = cursor.rowcount
            self.lastrowid = cursor.lastrowid
        return self

    async def fetchone(self) -> Any:
        return self._cursor.fetchone()

    async def fetchmany(self, size: int | None = None) -> list[Any]:
        return self._cursor.fetchmany(self._cursor.arraysize if size is None else size)

    async def fetchall(self) -> list[Any]:
        return self._cursor.fetchall()

    async def close(self) -> None:
        self._cursor.close()

    async def setinputsizes(self, *sizes: Any) -> None:
        return None

    async def nextset(self) -> None:
        return None


class Connection:
    """aiosqlite's connection interface, as SQLAlchemy's aiosqlite dialect uses it."""

    def __init__(self, raw: sqlite3.Connection, path: str, timeout: float) -> None:
        self.raw = raw
        self.path = path
        self.timeout = timeout
        self._holds_write_lock = False
        # the dialect checks `_connection` before commit / rollback, as it does for aiosqlite
        self._connection: sqlite3.Connection | None = raw

    @property
    def isolation_level(self) -> str | None:
        return self.raw.isolation_level

    async def run(self, call: Any, sql: str, parameters: Any) -> Any:
        """Run one statement; wait (asynchronously) for the write lock where it needs it."""
        head = sql[:1]  # (_begins_write called only where its stripped text may be a BEGIN)
        if (head in "bB" or head.isspace()) and not self._holds_write_lock \
                and _begins_write(sql):
            await write_turns_at(self.path).acquire()
            self._holds_write_lock = True
        try:
            deadline: float | None = None
            pause = _BUSY_FIRST_PAUSE
            while True:
                starts_transaction = not self.raw.in_transaction
                try:
                    return call(sql, parameters)
                except sqlite3.OperationalError as error:
                    # Only a statement that starts a transaction may be retried: inside one,
                    # SQLite has already rolled back nothing we could redo safely.
                    if not (starts_transaction and _is_busy(error)):
                        raise
                    now = time.monotonic()
                    deadline = deadline if deadline is not None else now + self.timeout
                    if now >= deadline:
                        raise
                    await asyncio.sleep(pause)
                    pause = min(pause * 2, _BUSY_MAX_PAUSE)
        finally:
            self._settle()

    def _settle(self) -> None:
        """Release the process's write lock once this connection's transaction has ended."""
        if not self.raw.in_transaction:
            self._release()

    def _release(self) -> None:
        if self._holds_write_lock:
            self._holds_write_lock = False
            write_turns_at(self.path).release()

    def cursor(self) -> Cursor:
        return Cursor(self)

    async def execute(self, sql: str, parameters: Any = ()) -> Cursor:
        cursor = Cursor(self)
        return await cursor.execute(sql, parameters)

    async def commit(self) -> None:
        try:
            self.raw.commit()
        finally:
            self._settle()
        checkpoints.after_commit(self.path)

    async def rollback(self) -> None:
        try:
            self.raw.rollback()
        finally:
            self._settle()

    async def close(self) -> None:
        try:
            self.raw.close()
        finally:
            self._release()

    def stop(self) -> None:
        """Forced termination (the dialect's terminate): close without waiting."""
        self.raw.close()
        try:
            self._release()
        except RuntimeError:  # no running loop (garbage collection at exit)
            pass

    async def create_function(self, *args: Any, **kwargs: Any) -> None:
        self.raw.create_function(*args, **kwargs)

    async def create_collation(self, name: str, callable_: Any) -> None:
        self.raw.create_collation(name, callable_)


def connector(path: str, timeout: float = 30.0) -> Any:
    """`async_creator` for create_async_engine: a new connection to the database at `path`.

    Connections are opened in autocommit mode (isolation_level None: transactions are begun
    explicitly, which keeps SAVEPOINT working) with busy_timeout 0 (lock waits are ours)."""

    async def connect() -> Connection:
        raw = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        raw.execute("PRAGMA busy_timeout=0")
        raw.execute("PRAGMA wal_autocheckpoint=0")  # checkpoints run off the loop (above)
        return Connection(raw, path, timeout)

    return connect


__all__ = ["Connection", "Cursor", "connector"]
