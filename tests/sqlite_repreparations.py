"""The statements SQLite prepared again while a block ran, on the connections this task used:
SQLite's own count (`reprep` of the `sqlite_stmt` table) of the statements each connection
keeps prepared. A statement whose plan a bound value could change (a parameter compared with
the column of a partial index's WHERE) is prepared again at every run: a deterministic sign of
a cost that timing would only show on a quiet machine (plumbing.sql_constants)."""

from __future__ import annotations

import collections
import sqlite3
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from tests.statement_counter import listening


class Repreparations:
    def __init__(self) -> None:
        self.by_statement: collections.Counter[str] = collections.Counter()

    def __bool__(self) -> bool:
        return bool(+self.by_statement)


def _counts(raw: Any) -> collections.Counter[str]:
    counts: collections.Counter[str] = collections.Counter()
    for sql, reprep in raw.execute("SELECT sql, reprep FROM sqlite_stmt"):
        counts[" ".join(sql.split())] += reprep
    return counts


def available() -> bool:
    """Whether SQLite here was built with the `sqlite_stmt` table (SQLITE_ENABLE_STMTVTAB)."""
    try:
        sqlite3.connect(":memory:").execute("SELECT sql FROM sqlite_stmt").fetchall()
    except sqlite3.OperationalError:
        return False
    return True


@asynccontextmanager
async def sqlite_repreparations(engines: Iterable[AsyncEngine]) -> AsyncIterator[Repreparations]:
    """What this task's statements on `engines` were prepared again while the block ran (other
    tasks' statements on the same connections may count as well: keep them quiet)."""
    found = Repreparations()
    before: dict[int, tuple[Any, collections.Counter[str]]] = {}

    def install(conn: Any, *_args: Any) -> None:
        raw = conn.connection.driver_connection._connection
        if id(raw) not in before:
            before[id(raw)] = (raw, _counts(raw))

    with listening(engines, "before_cursor_execute", install, this_task_only=True):
        yield found
    for raw, counts in before.values():
        found.by_statement.update(_counts(raw))
        found.by_statement.subtract(counts)
