"""Claiming rows of a durable work table with a lease, safely across processes.

A row is claimable when it is `queued` and due, or `working` with an expired lease (its
worker died). On PostgreSQL the claim uses FOR UPDATE SKIP LOCKED, so two processes never
claim the same row; on SQLite every transaction takes the write lock (BEGIN IMMEDIATE), which
serialises claims the same way.
"""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy import and_, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm.attributes import set_committed_value

from service.db import unit_of_work

Row = TypeVar("Row")

QUEUED = "queued"
WORKING = "working"
DONE = "done"
FAILED = "failed"


async def claim_rows(
    sessions: async_sessionmaker[AsyncSession],
    model: type[Row],
    *,
    owner: str,
    now_ms: int,
    lease_ms: int,
    limit: int,
    due_column: Any = None,
    order_column: Any = None,
) -> list[Row]:
    table: Any = model
    claimable = or_(
        table.status == QUEUED,
        and_(table.status == WORKING, table.lease_until_ms < now_ms),
    )
    if due_column is not None:
        claimable = and_(claimable, due_column <= now_ms)
    statement = (
        select(model)
        .where(claimable)
        .order_by(order_column if order_column is not None else table.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    async with unit_of_work(sessions) as session:
        rows = list((await session.scalars(statement)).all())
        if rows:
            await session.execute(
                update(model)
                .where(table.id.in_([row.id for row in rows]))  # type: ignore[attr-defined]
                .values(
                    status=WORKING,
                    lease_owner=owner,
                    lease_until_ms=now_ms + lease_ms,
                    attempts=table.attempts + 1,
                )
            )
            # What the UPDATE wrote, without reading each row back (no one else can have
            # changed them: they are locked by this transaction).
            until = now_ms + lease_ms
            claimed: list[Any] = list(rows)
            for row in claimed:
                set_committed_value(row, "status", WORKING)
                set_committed_value(row, "lease_owner", owner)
                set_committed_value(row, "lease_until_ms", until)
                set_committed_value(row, "attempts", (row.attempts or 0) + 1)
        return rows


async def finish_row(
    sessions: async_sessionmaker[AsyncSession],
    model: type[Row],
    row_id: str,
    owner: str,
    **values: Any,
) -> bool:
    """Update a claimed row if this worker still holds it; False when the lease was lost."""
    table: Any = model
    async with unit_of_work(sessions) as session:
        result: Any = await session.execute(
            update(model)
            .where(table.id == row_id, table.lease_owner == owner, table.status == WORKING)
            .values(**values)
        )
        return bool(result.rowcount)
