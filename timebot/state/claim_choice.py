"""Which rows a claim of a durable work table takes (`timebot.state.queue` runs the claim):
the statuses a row goes through, and the condition on `id` that picks the due rows oldest
first — one lane's rows in order, interactive rows before bulk ones."""

from __future__ import annotations

from typing import Any

from sqlalchemy import BigInteger, Integer, and_, bindparam, exists, or_, select, union_all

from timebot.state.lanes import BULK, INTERACTIVE

QUEUED = "queued"
WORKING = "working"
DONE = "done"
FAILED = "failed"

LANE_HOLD_ATTEMPTS = 3
"""An older row of the lane holds the rows behind it for this many attempts at most (a row
that kills its worker every time must not hold its lane forever)."""


def _lane_is_free(table: Any, lane_column: Any, due_column: Any, order_column: Any) -> Any:
    """No older row of the same lane is being worked on, or waiting out a retry delay: rows of
    one lane go one after another, in order, whichever worker or process claims them. (An older
    row that is due is claimed in the same statement, before this one: claims are oldest first
    and serialised, see `queue.claim_records`.) An older row that failed for its own reason
    (`failures`), or was claimed LANE_HOLD_ATTEMPTS times, no longer holds the lane: a row
    that fails never blocks the rows behind it."""
    older = table.alias("older")
    order = order_column.key if order_column is not None else "id"
    lane = lane_column.key
    held = older.c.status == WORKING
    if due_column is not None:
        held = or_(held, and_(older.c.status == QUEUED,
                              older.c[due_column.key] > bindparam("claim_now_ms",
                                                                  type_=BigInteger)))
    return ~exists().where(
        older.c[lane] == table.c[lane],
        or_(older.c[order] < table.c[order],
            and_(older.c[order] == table.c[order], older.c.id < table.c.id)),
        held,
        older.c.failures == 0,
        older.c.attempts < LANE_HOLD_ATTEMPTS,
    )


def _claimable(table: Any, due_column: Any, lane_column: Any, order_column: Any,
               where: Any, status: str, in_order: bool = False) -> Any:
    """The rows of `status` a worker may claim now: queued ones, or working ones under an
    expired lease (their worker died); due, with `due_column`; the first of their lane, with
    `lane_column`; matching `where`. `in_order`: the due time is no key to seek by (`+ 0`),
    so that SQLite without statistics reads the rows in order from the index that has it
    (status, priority, order), rather than seeking all due rows by another and sorting them
    (4 ms for 3,000 queued rows, against 0.2 ms)."""
    now = bindparam("claim_now_ms", type_=BigInteger)
    claimable = table.c.status == status
    if status == WORKING:
        claimable = and_(claimable, table.c.lease_until_ms < now)
    if due_column is not None:
        due = table.c[due_column.key]
        claimable = and_(claimable, (due + 0 if in_order else due) <= now)
    if lane_column is not None:
        claimable = and_(claimable, _lane_is_free(table, lane_column, due_column, order_column))
    if where is not None:
        claimable = and_(claimable, where)
    return claimable


def chosen(table: Any, due_column: Any, order_column: Any, lane_column: Any = None,
            priority_column: Any = None, where: Any = None, express: bool = False) -> Any:
    """The condition on `id` that picks what a claim takes: the claimable queued rows oldest
    first, at most `claim_limit`, and as many rows taken over from a dead worker, locked
    (FOR UPDATE SKIP LOCKED: a second worker passes over them). Queued rows and working
    ones are chosen apart so that an index on (status, [priority,] order) serves each ORDER
    BY (one over both statuses sorts every due row at each claim, under the write lock).
    With `priority_column` (timebot.state.lanes): interactive rows first, then bulk ones,
    and the oldest bulk row besides: bulk work never starves. `express`: interactive rows
    only (a claim beside a batch of bulk work under way, for what a person waits for)."""
    order = table.c[order_column.key] if order_column is not None else table.c.id
    limit = bindparam("claim_limit", type_=Integer)
    queued = _claimable(table, due_column, lane_column, order_column, where, QUEUED)
    first = select(table.c.id).where(queued).limit(limit).with_for_update(skip_locked=True)
    taken_over = (
        select(table.c.id)
        .where(_claimable(table, due_column, lane_column, order_column, where, WORKING))
        .order_by(order)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    if priority_column is None:
        return _one_of(table, first.order_by(order), taken_over)
    priority = table.c[priority_column.key]
    queued = _claimable(table, due_column, lane_column, order_column, where, QUEUED,
                        in_order=True)
    if express:
        interactive = select(table.c.id).where(queued, priority == INTERACTIVE)
        return table.c.id.in_(interactive.order_by(order).limit(limit)
                              .with_for_update(skip_locked=True))
    first = select(table.c.id).where(queued).limit(limit).with_for_update(skip_locked=True)
    reserve = (
        select(table.c.id)
        .where(queued, priority == BULK)
        .order_by(order)
        .limit(1)
        .with_for_update(skip_locked=True)
    )
    return _one_of(table, first.order_by(priority, order), taken_over, reserve)


def _one_of(table: Any, *choices: Any) -> Any:
    """`id` among the ids each choice picks: one IN over their UNION ALL, each choice a
    subquery of its own (where its ORDER BY, LIMIT and FOR UPDATE SKIP LOCKED stay). Not an OR
    of one IN each: PostgreSQL reads every row of the table to test such an OR (4.7 ms a claim
    once 4,500 mails were sent, 7 ms at 20,000), where this reads the chosen rows by their key
    (1 ms at 20,000) — a claim costs what it takes, not the table's history. (A row two
    choices pick comes twice: IN takes it once.)"""
    picked = [choice.subquery() for choice in choices]
    return table.c.id.in_(union_all(*(select(one.c.id) for one in picked)))


def claim_order(row: Any, order_column: Any = None, priority_column: Any = None) -> Any:
    """The sort key of a claimed row: the order a worker hands its batch out in."""
    order = getattr(row, order_column.key if order_column is not None else "id")
    if priority_column is None:
        return (order, row.id)
    return (getattr(row, priority_column.key), order, row.id)
