"""Claiming rows of a durable work table with a lease, safely across processes (a row of such
a table is a `timebot.state.leased_row.LeasedRow`).

A row is claimable when it is `queued` and due, or `working` with an expired lease (its
worker died). On PostgreSQL the claim uses FOR UPDATE SKIP LOCKED, so two processes never
claim the same row; on SQLite every transaction takes the write lock (BEGIN IMMEDIATE), which
serialises claims the same way.

The statements are built once per table (and shape of values), with bind parameters: these run
for every message, and building, caching-keying and ORM-evaluating a statement per call cost
more than running it. The UPDATEs are Core statements (no ORM session synchronisation: the
claimed objects are set below, finished rows are not read again).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from sqlalchemy import (
    BigInteger,
    bindparam,
    select,
    text,
    update,
)
from sqlalchemy import Row as SqlRow
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm.attributes import set_committed_value

from plumbing.db import unit_of_work
from timebot.state.claim_choice import DONE as DONE
from timebot.state.claim_choice import FAILED as FAILED
from timebot.state.claim_choice import LANE_HOLD_ATTEMPTS as LANE_HOLD_ATTEMPTS
from timebot.state.claim_choice import QUEUED as QUEUED
from timebot.state.claim_choice import WORKING as WORKING
from timebot.state.claim_choice import chosen, claim_order
from timebot.state.leased_row import LeasedRow

Row = TypeVar("Row", bound=LeasedRow)

Write = Callable[[AsyncSession], Awaitable[None]]
"""A write that goes with a row's outcome, in its transaction (`FinishBatch.add`)."""

_CLAIMS: dict[tuple[Any, ...], tuple[Any, Any]] = {}
_FINISHES: dict[tuple[Any, frozenset[str]], Any] = {}


def _leased(table: Any, claimed_at_column: Any = None) -> dict[str, Any]:
    """What a claim writes: the row is working, under this owner's lease, one more attempt;
    with `claimed_at_column`, the claim's time there."""
    values = {
        "status": WORKING,
        "lease_owner": bindparam("claim_owner"),
        "lease_until_ms": bindparam("claim_until_ms", type_=BigInteger),
        "attempts": table.c.attempts + 1,
    }
    if claimed_at_column is not None:
        values[claimed_at_column.key] = bindparam("claim_now_ms", type_=BigInteger)
    return values


def _claim_statements(model: Any, due_column: Any, order_column: Any, priority_column: Any,
                      where: Any) -> tuple[Any, Any]:
    """(SELECT the rows to claim, UPDATE … SET status='working', …) for the model."""
    key = (model, due_column, order_column, priority_column, where)
    found = _CLAIMS.get(key)
    if found is not None:
        return found
    table = model.__table__
    choose = select(model).where(chosen(table, due_column, order_column, None,
                                         priority_column, where))
    take = (
        update(table)
        .where(table.c.id.in_(bindparam("claim_ids", expanding=True)))
        .values(_leased(table))
    )
    # Columns are class attributes and `where` a worker's own clause: a few keys (not built
    # per call).
    if len(_CLAIMS) < 256:
        _CLAIMS[key] = (choose, take)
    return choose, take


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
    priority_column: Any = None,
    where: Any = None,
) -> list[Row]:
    """Claim up to `limit` due rows (only those matching `where`, when given; pass the same
    clause object each time: the statement is kept for it), in claim order (`claim_order`).
    With `priority_column`, one bulk row more may come (`claim_choice.chosen`)."""
    choose, take = _claim_statements(model, due_column, order_column, priority_column, where)
    until = now_ms + lease_ms
    async with unit_of_work(sessions) as session:
        rows = list(
            (await session.scalars(choose, {"claim_now_ms": now_ms, "claim_limit": limit})).all()
        )
        if rows:
            claimed: list[Any] = rows
            await session.execute(
                take,
                {"claim_ids": [row.id for row in claimed], "claim_owner": owner,
                 "claim_until_ms": until},
            )
            # What the UPDATE wrote, without reading each row back (no one else can have
            # changed them: they are locked by this transaction). A Core UPDATE leaves the
            # loaded objects alone: `attempts` is the stored count, this attempt included.
            for row in claimed:
                set_committed_value(row, "status", WORKING)
                set_committed_value(row, "lease_owner", owner)
                set_committed_value(row, "lease_until_ms", until)
                set_committed_value(row, "attempts", (row.attempts or 0) + 1)
        rows.sort(key=lambda row: claim_order(row, order_column, priority_column))
        return rows


_TAKES: dict[tuple[Any, ...], Any] = {}
_SERIALISE = text("SELECT pg_advisory_xact_lock(hashtext(:lock_name))")


def _take_statement(model: Any, due_column: Any, order_column: Any, lane_column: Any,
                    priority_column: Any, claimed_at_column: Any, express: bool) -> Any:
    """UPDATE … SET status='working', … WHERE id IN (the claimable rows, oldest first, at most
    `claim_limit`, FOR UPDATE SKIP LOCKED) RETURNING the rows as updated."""
    key = (model, due_column, order_column, lane_column, priority_column, claimed_at_column,
           express)
    statement = _TAKES.get(key)
    if statement is not None:
        return statement
    table = model.__table__
    statement = (
        update(table)
        .where(chosen(table, due_column, order_column, lane_column, priority_column,
                      express=express))
        .values(_leased(table, claimed_at_column))
        .returning(*table.c)
    )
    if len(_TAKES) < 256:  # columns are class attributes: a few keys (not built per call)
        _TAKES[key] = statement
    return statement


async def claim_records(
    sessions: async_sessionmaker[AsyncSession],
    model: type[Any],
    *,
    owner: str,
    now_ms: int,
    lease_ms: int,
    limit: int,
    due_column: Any = None,
    order_column: Any = None,
    lane_column: Any = None,
    priority_column: Any = None,
    claimed_at_column: Any = None,
    express: bool = False,
) -> list[SqlRow[Any]]:
    """`claim_rows` in one statement, the claimed rows as read-only records (Core rows: the
    model's columns as attributes, as the claim wrote them) rather than ORM objects — no
    identity map, no loading, one round trip. In claim order (RETURNING has none).
    With `lane_column`, only the oldest unfinished row of each lane is claimable (at most one
    row of a lane a claim: `claim_choice`). With `priority_column`, interactive rows first
    and one bulk row more may come (`claim_choice.chosen`). With `claimed_at_column`, the
    claim writes its `now_ms` there (as it writes the lease: no transaction of its own).
    `express` (with `priority_column`): interactive rows only (`claim_choice.chosen`)."""
    statement = _take_statement(model, due_column, order_column, lane_column, priority_column,
                                claimed_at_column, express)
    parameters = {"claim_now_ms": now_ms, "claim_limit": limit, "claim_owner": owner,
                  "claim_until_ms": now_ms + lease_ms}
    async with unit_of_work(sessions) as session:
        connection = await session.connection()
        if lane_column is not None and connection.dialect.name == "postgresql":
            # Claims of a laned table one at a time (SQLite's BEGIN IMMEDIATE does the same):
            # a claim then sees the rows the previous one took as working, never as queued
            # rows it skips as locked while it takes a younger row of their lane.
            await connection.execute(_SERIALISE, {"lock_name": model.__tablename__})
        rows = list((await connection.execute(statement, parameters)).all())
    rows.sort(key=lambda row: claim_order(row, order_column, priority_column))
    return rows


def _finish_statement(model: Any, names: frozenset[str]) -> Any:
    """UPDATE the row SET <names> WHERE this owner still holds it."""
    key = (model, names)
    found = _FINISHES.get(key)
    if found is not None:
        return found
    table = model.__table__
    unknown = names - set(table.c.keys())
    if unknown:
        raise ValueError(f"{table.name} has no column {', '.join(sorted(unknown))}")
    statement = (
        update(table)
        .where(table.c.id == bindparam("finish_id"),
               table.c.lease_owner == bindparam("finish_owner"),
               table.c.status == WORKING)
        .values({name: bindparam(f"finish_new_{name}") for name in sorted(names)})
    )
    _FINISHES[key] = statement
    return statement


def _finish_parameters(row_id: str, owner: str, values: dict[str, Any]) -> dict[str, Any]:
    parameters = {f"finish_new_{name}": value for name, value in values.items()}
    parameters["finish_id"] = row_id
    parameters["finish_owner"] = owner
    return parameters


async def finish_row(
    sessions: async_sessionmaker[AsyncSession],
    model: type[Row],
    row_id: str,
    owner: str,
    **values: Any,
) -> bool:
    """Update a claimed row if this worker still holds it; False when the lease was lost."""
    statement = _finish_statement(model, frozenset(values))
    async with unit_of_work(sessions) as session:
        result: Any = await session.execute(statement, _finish_parameters(row_id, owner, values))
        return bool(result.rowcount)


async def finish_in(session: AsyncSession, model: type[Row], row_id: str, owner: str,
                    **values: Any) -> bool:
    """`finish_row` in the caller's transaction (what the row's handling wrote last, with
    it); False when the lease was lost."""
    statement = _finish_statement(model, frozenset(values))
    result: Any = await session.execute(statement, _finish_parameters(row_id, owner, values))
    return bool(result.rowcount)


async def finish_many(
    sessions: async_sessionmaker[AsyncSession],
    model: type[Row],
    owner: str,
    finished: Sequence[tuple[str, dict[str, Any]]],
    writes: Sequence[Write] = (),
) -> None:
    """`finish_row` for each (row id, values), in one transaction: one executemany per shape
    of values (which columns they set). Rows whose lease this worker lost are left alone.
    `writes` go in the same transaction (what handling the rows wrote with their outcome)."""
    shapes: dict[frozenset[str], list[dict[str, Any]]] = {}
    for row_id, values in finished:
        shapes.setdefault(frozenset(values), []).append(_finish_parameters(row_id, owner, values))
    if not shapes and not writes:
        return
    async with unit_of_work(sessions) as session:
        for names, parameters_list in shapes.items():
            await session.execute(_finish_statement(model, names), parameters_list)
        for write in writes:
            await write(session)


class FinishBatch:
    """How a claimed batch's rows ended, written together (`finish_many`, one transaction):
    when flushed (the end of the batch), and as soon as a row is added once the oldest
    unwritten one has waited `flush_seconds`. A write that fails keeps its rows for the next
    flush. A process that dies in between has those rows taken over after the lease and
    handled again, as if it had died while handling them (at least once, never dropped)."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        model: type[Any],
        owner: str,
        flush_seconds: float,
        on_flush: Callable[[], None] | None = None,
    ) -> None:
        """`on_flush`: called after each write (e.g. to tell who waits for finished rows)."""
        self.sessions = sessions
        self.model = model
        self.owner = owner
        self.flush_seconds = flush_seconds
        self.on_flush = on_flush
        self.items: list[tuple[str, dict[str, Any]]] = []
        self.writes: list[tuple[Write, Callable[[], None] | None]] = []
        self.since = 0.0

    async def add(self, row_id: str, **values: Any) -> None:
        await self.add_with(row_id, (), **values)

    async def add_with(self, row_id: str, writes: Sequence[tuple[Write, Callable[[], None] | None]],
                       **values: Any) -> None:
        """`add`, and `writes` written with the row's outcome: (write, called once written)."""
        if not self.items:
            self.since = time.monotonic()
        self.items.append((row_id, values))
        self.writes.extend(writes)
        if time.monotonic() - self.since >= self.flush_seconds:
            await self.flush()

    async def flush(self) -> None:
        if not self.items:
            return
        items, self.items = self.items, []
        writes, self.writes = self.writes, []
        try:
            await finish_many(self.sessions, self.model, self.owner, items,
                              [write for write, _ in writes])
        except BaseException:
            self.items[:0] = items
            self.writes[:0] = writes
            raise
        for _, written in writes:
            if written is not None:
                written()
        if self.on_flush is not None:
            self.on_flush()
