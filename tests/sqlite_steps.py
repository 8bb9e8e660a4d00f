"""SQLite's virtual machine steps (its progress handler called at every instruction) of the
statements this task runs on some engines: a deterministic measure of how much a read costs,
which a plan that scans grows and a plan that seeks keeps, whatever the machine's load."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine


class Steps:
    count = 0


@asynccontextmanager
async def sqlite_steps(engines: Iterable[AsyncEngine]) -> AsyncIterator[Steps]:
    """Counts the steps of this task's statements on `engines` while the block runs (other
    tasks' statements on the same connections' pool are not counted)."""
    unique = list({id(e): e for e in engines}.values())
    this_task = asyncio.current_task()
    steps = Steps()
    raw_connections: dict[int, Any] = {}

    def step() -> int:
        steps.count += 1
        return 0

    def install(conn: Any, *_args: Any) -> None:
        raw = conn.connection.driver_connection._connection
        if asyncio.current_task() is this_task and id(raw) not in raw_connections:
            raw_connections[id(raw)] = raw
            raw.set_progress_handler(step, 1)

    for engine in unique:
        event.listen(engine.sync_engine, "before_cursor_execute", install)
    try:
        yield steps
    finally:
        for engine in unique:
            event.remove(engine.sync_engine, "before_cursor_execute", install)
        for raw in raw_connections.values():
            raw.set_progress_handler(None, 1)
