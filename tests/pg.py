"""Fresh PostgreSQL databases for tests (trust auth on the machine's server)."""

from __future__ import annotations

import asyncio
import os
import queue
import sys
import threading
import uuid

PG_ADMIN_DSN = os.environ.get("TIMEBOT_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")


async def create_pg_database() -> str:
    """A fresh PostgreSQL database; returns its name."""
    import asyncpg

    name = f"timebot_test_{uuid.uuid4().hex[:12]}"
    connection = await asyncpg.connect(PG_ADMIN_DSN)
    try:
        await connection.execute(f'CREATE DATABASE "{name}"')
    finally:
        await connection.close()
    return name


async def drop_pg_database(name: str) -> None:
    import asyncpg

    connection = await asyncpg.connect(PG_ADMIN_DSN)
    try:
        await connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await connection.close()


# DROP DATABASE waits for a checkpoint of the whole cluster (~0.2-3 s while the other workers
# write): a stopped server's databases are dropped on a thread of their own instead, while the
# tests go on; the session waits for the last ones at its end (tests/conftest.py).
_to_drop: queue.Queue[str] = queue.Queue()
_dropper: list[threading.Thread] = []


def drop_pg_database_soon(name: str) -> None:
    """Drops `name` (which nobody uses any more) in the background; `dropped_all` waits."""
    if not _dropper:
        _dropper.append(threading.Thread(target=_drop_queued, name="drop-pg-databases",
                                         daemon=True))
        _dropper[0].start()
    _to_drop.put(name)


def _drop_queued() -> None:
    # Waits in the daemon thread itself: a thread of an executor (asyncio.to_thread) waiting
    # on the queue would be joined at the interpreter's exit, forever.
    while True:
        name = _to_drop.get()
        try:
            asyncio.run(drop_pg_database(name))
        except Exception as error:  # a leftover database, not a failed test: said
            print(f"could not drop the test database {name}: {error!r}", file=sys.stderr)
        finally:
            _to_drop.task_done()


def dropped_all() -> None:
    """Waits until every database given to `drop_pg_database_soon` is dropped."""
    _to_drop.join()


def pg_url(database: str) -> str:
    base = PG_ADMIN_DSN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://")
    return f"{base}/{database}"
