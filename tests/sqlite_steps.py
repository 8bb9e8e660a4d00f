"""SQLite's virtual machine steps (its progress handler called at every instruction) of the
statements this task runs on some engines: a deterministic measure of how much a read costs,
which a plan that scans grows and a plan that seeks keeps, whatever the machine's load."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from tests.statement_counter import listening


class Steps:
    count = 0


@asynccontextmanager
async def sqlite_steps(engines: Iterable[AsyncEngine]) -> AsyncIterator[Steps]:
    """Counts the steps of this task's statements on `engines` while the block runs (other
    tasks' statements on the same connections' pool are not counted)."""
    steps = Steps()
    raw_connections: dict[int, Any] = {}

    def step() -> int:
        steps.count += 1
        return 0

    def install(conn: Any, *_args: Any) -> None:
        raw = conn.connection.driver_connection._connection
        if id(raw) not in raw_connections:
            raw_connections[id(raw)] = raw
            raw.set_progress_handler(step, 1)

    try:
        with listening(engines, "before_cursor_execute", install, this_task_only=True):
            yield steps
    finally:
        for raw in raw_connections.values():
            raw.set_progress_handler(None, 1)
