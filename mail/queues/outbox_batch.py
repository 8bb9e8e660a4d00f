"""A bulk run's mails written in short batches (issue #40): within `Outbox.batched`, a mail
queued without a session of its caller's is held back and written with the next ones, BATCH_ROWS
at a time, in one transaction, after which the run yields to the loop. A run of a thousand
reminders then takes the database's write lock fifty times, a few milliseconds each, instead of
a thousand times; a writer waiting for the lock (an approver's receipt, a Slack request's key)
goes in between two batches. What is held back is written at the end of the run at the latest
(also when it fails); a process that dies first loses only mails not yet queued, which the next
run finds unsent and queues (their dedupe keys refuse any second row)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from timebot.state.db import unit_of_work

BATCH_ROWS = 20

# Writes the rows in the session's transaction, each one unless its key was taken before.
InsertMany = Callable[[AsyncSession, list[dict[str, Any]]], Awaitable[None]]


class RowBatch:
    def __init__(self, owner: object, sessions: async_sessionmaker[AsyncSession],
                 insert: InsertMany,
                 rows: int, written: Callable[[], None] | None) -> None:
        self.owner, self.sessions, self.insert = owner, sessions, insert
        self.rows, self.written = rows, written
        self.held: list[dict[str, Any]] = []
        self.transactions = 0
        # The run's own task: a task it starts inherits the context, not the batch (a receipt
        # queued there goes at once, not with the run's next batch).
        self.task = asyncio.current_task()

    async def add(self, values: dict[str, Any]) -> None:
        self.held.append(values)
        if len(self.held) >= self.rows:
            await self.flush()

    async def flush(self) -> None:
        """What is held back, written in one transaction. Then the loop is yielded to: a
        writer waiting for the lock takes it before the next batch."""
        if not self.held:
            return
        held, self.held = self.held, []
        async with unit_of_work(self.sessions) as session:
            await self.insert(session, held)
        self.transactions += 1
        if self.written is not None:
            self.written()
        await asyncio.sleep(0)


_CURRENT: ContextVar[RowBatch | None] = ContextVar("outbox_batch", default=None)


def current_batch(owner: object) -> RowBatch | None:
    """The batch open in this task for `owner` (an outbox), if any."""
    batch = _CURRENT.get()
    if batch is None or batch.owner is not owner or batch.task is not asyncio.current_task():
        return None
    return batch


def opened(batch: RowBatch) -> Any:
    return _CURRENT.set(batch)


def closed(token: Any) -> None:
    _CURRENT.reset(token)
