"""The SQL statements (and the commits) a piece of work runs on some engines, counted through
SQLAlchemy's `before_cursor_execute` and `commit` events: what the tests that pin a path's
round trips count, so that one added to it is a decision. Optionally only those of the task
that opens the block: a live server's workers run theirs meanwhile, in other tasks, on the
same engines."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from sqlalchemy import Engine, event
from sqlalchemy.ext.asyncio import AsyncEngine


def _unique(engines: Iterable[AsyncEngine | Engine]) -> list[Engine]:
    """The engines' sync engines (where SQLAlchemy's events are), each once: a runtime's read
    and state engines may be the same one."""
    syncs = [e.sync_engine if isinstance(e, AsyncEngine) else e for e in engines]
    return list({id(engine): engine for engine in syncs}.values())


@contextmanager
def listening(engines: Iterable[AsyncEngine | Engine], name: str,
              listener: Callable[..., None], *, this_task_only: bool) -> Iterator[None]:
    """`listener` called at the engines' event `name` (with the event's arguments) while the
    block runs; with `this_task_only`, only when the task that opened the block runs it."""
    this_task = asyncio.current_task()

    def called(*args: Any) -> None:
        if not this_task_only or asyncio.current_task() is this_task:
            listener(*args)

    unique = _unique(engines)
    for engine in unique:
        event.listen(engine, name, called)
    try:
        yield
    finally:
        for engine in unique:
            event.remove(engine, name, called)


class Statements:
    """What ran while the block did: each statement's SQL text, as it was sent, and how many
    commits."""

    def __init__(self) -> None:
        self.sql: list[str] = []
        self.commits = 0

    @property
    def count(self) -> int:
        """How many statements ran (every one the cursor ran: a BEGIN sent as one too)."""
        return len(self.sql)

    def lines(self, width: int) -> list[str]:
        """The statements but BEGIN (where a driver runs the transaction's BEGIN on a cursor
        it is a statement of that database only), each on one line, its first `width`
        characters: what a test counts and shows when the count is not the one expected."""
        return [" ".join(sql.split())[:width] for sql in self.sql
                if not sql.lstrip().startswith("BEGIN")]


@asynccontextmanager
async def statements(engines: Iterable[AsyncEngine | Engine], *,
                     this_task_only: bool = False) -> AsyncIterator[Statements]:
    """Records the statements and the commits run on `engines` while the block runs (with
    `this_task_only`, only those of the task that opens it)."""
    seen = Statements()

    def statement(_conn: Any, _cursor: Any, sql: str, *_args: Any) -> None:
        seen.sql.append(sql)

    def commit(_conn: Any) -> None:
        seen.commits += 1

    engines = list(engines)
    with (listening(engines, "before_cursor_execute", statement,
                    this_task_only=this_task_only),
          listening(engines, "commit", commit, this_task_only=this_task_only)):
        yield seen
