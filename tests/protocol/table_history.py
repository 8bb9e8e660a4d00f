"""A queue table's history for the plan tests: thousands of rows inserted and analysed, so
that the databases plan as they would in a deployment that has run for a while; and the plans
of the statements a call runs on it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import delete, event, insert

from tests.protocol.conftest import StateDB


@asynccontextmanager
async def table_history(state_db: StateDB, rows: dict[Any, list[dict[str, Any]]]
                        ) -> AsyncIterator[StateDB]:
    """Each model's table holding just `rows[model]`, analysed; emptied afterwards."""
    async with state_db.sessions() as session:
        for model, values in rows.items():
            await session.execute(delete(model))
            await session.execute(insert(model), values)
        await session.commit()
    async with state_db.engine.connect() as connection:
        await connection.exec_driver_sql("ANALYZE")
        await connection.commit()
    try:
        yield state_db
    finally:
        async with state_db.sessions() as session:
            for model in rows:
                await session.execute(delete(model))
            await session.commit()


def whole_table_reads(plan: list[str], table: str) -> list[str]:
    """The plan's lines that read every row of `table` (SQLite's and PostgreSQL's words)."""
    return [line for line in plan
            if f"Seq Scan on {table} " in f"{line.strip()} " or line.strip() == f"SCAN {table}"]


async def statements_and_plans(state_db: StateDB, call: Callable[[], Awaitable[Any]]
                               ) -> tuple[Any, list[str], list[str]]:
    """What `call` returns, the plan of each SELECT it ran (with its parameters), and the
    statements it ran."""
    ran: list[tuple[str, Any]] = []

    def keep(conn: Any, cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        ran.append((statement, parameters))

    event.listen(state_db.engine.sync_engine, "before_cursor_execute", keep)
    try:
        result = await call()
    finally:
        event.remove(state_db.engine.sync_engine, "before_cursor_execute", keep)
    explain = "EXPLAIN " if state_db.backend == "postgresql" else "EXPLAIN QUERY PLAN "
    plan: list[str] = []
    async with state_db.engine.connect() as connection:
        for statement, parameters in ran:
            if statement.lstrip().upper().startswith("SELECT"):
                rows = (await connection.exec_driver_sql(explain + statement,
                                                         tuple(parameters))).all()
                plan += [str(row[-1]) for row in rows]
        await connection.rollback()
    return result, plan, [statement for statement, _ in ran]
