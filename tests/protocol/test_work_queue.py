"""Claiming and finishing rows of a durable work table (timebot.state.queue) on SQLite and
PostgreSQL: a row is finished only by the worker that still holds its lease."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import delete, select

from mail.queues.inbox import Inbox
from plumbing.clock import Clock
from tests.protocol.conftest import StateDB
from timebot.state.models import InboxMessage
from timebot.state.queue import (
    DONE,
    QUEUED,
    WORKING,
    claim_records,
    claim_rows,
    finish_many,
    finish_row,
)

NOW = 1_800_000_000_000
LEASE = 60_000


@pytest.fixture
async def ids(state_db: StateDB) -> AsyncIterator[list[str]]:
    """Five queued inbox rows, received one second apart."""
    async with state_db.sessions() as session:
        await session.execute(delete(InboxMessage))
        await session.commit()
    clock = Clock(frozen_ms=NOW)
    inbox = Inbox(state_db.sessions, clock)
    for number in range(5):
        raw = f"Message-ID: <m{number}@example.com>\r\n\r\nbody\r\n".encode()
        assert await inbox.accept(raw, "a@example.com", ["b@example.com"], "smtp")
        clock.advance(1000)
    yield [row.id for row in await inbox.all()]


async def rows(state_db: StateDB) -> dict[str, InboxMessage]:
    async with state_db.sessions() as session:
        return {row.id: row for row in await session.scalars(select(InboxMessage))}


async def claim(state_db: StateDB, owner: str, now: int = NOW + 10_000,
                limit: int = 10) -> list[InboxMessage]:
    return await claim_rows(
        state_db.sessions, InboxMessage, owner=owner, now_ms=now, lease_ms=LEASE, limit=limit,
        order_column=InboxMessage.received_ms,
    )


async def test_a_claim_takes_the_oldest_and_holds_them(state_db: StateDB, ids: list[str]) -> None:
    first = await claim(state_db, "one", limit=3)
    assert [row.id for row in first] == ids[:3]
    assert {(row.status, row.lease_owner, row.attempts) for row in first} == {
        (WORKING, "one", 1)
    }
    assert {row.lease_until_ms for row in first} == {NOW + 10_000 + LEASE}
    stored = await rows(state_db)
    assert [(stored[i].status, stored[i].lease_owner, stored[i].attempts) for i in ids[:3]] \
        == [(WORKING, "one", 1)] * 3
    # the others get the rest, not these (leased)
    assert [row.id for row in await claim(state_db, "two")] == ids[3:]
    assert await claim(state_db, "three") == []
    # once a lease has expired, the rows are claimable again (attempts counted)
    again = await claim(state_db, "three", now=NOW + 10_000 + LEASE + 1)
    assert [(row.id, row.attempts) for row in again] == [(i, 2) for i in ids]


async def test_only_the_holder_finishes_a_row(state_db: StateDB, ids: list[str]) -> None:
    await claim(state_db, "one")
    assert not await finish_row(state_db.sessions, InboxMessage, ids[0], "two", status=DONE)
    assert await finish_row(state_db.sessions, InboxMessage, ids[0], "one", status=DONE,
                            outcome="ok", processed_ms=NOW, lease_owner=None)
    row = (await rows(state_db))[ids[0]]
    assert (row.status, row.outcome, row.processed_ms, row.lease_owner) == (
        DONE, "ok", NOW, None
    )
    # finished: not again
    assert not await finish_row(state_db.sessions, InboxMessage, ids[0], "one", status=QUEUED)
    # taken over after the lease expired: the first worker can no longer finish it
    await claim(state_db, "two", now=NOW + 10_000 + LEASE + 1)
    assert not await finish_row(state_db.sessions, InboxMessage, ids[1], "one", status=DONE)
    assert (await rows(state_db))[ids[1]].lease_owner == "two"


async def test_finishing_an_unknown_column_is_refused(state_db: StateDB, ids: list[str]) -> None:
    await claim(state_db, "one", limit=1)
    with pytest.raises(ValueError, match="no column"):
        await finish_row(state_db.sessions, InboxMessage, ids[0], "one", stauts=DONE)
    with pytest.raises(ValueError, match="no column"):
        await finish_many(state_db.sessions, InboxMessage, "one", [(ids[0], {"stauts": DONE})])


async def test_finish_many_writes_each_rows_values(state_db: StateDB, ids: list[str]) -> None:
    await claim(state_db, "one", limit=4)
    await claim(state_db, "two")  # ids[4]
    await finish_many(state_db.sessions, InboxMessage, "one", [
        (ids[0], {"status": DONE, "outcome": "a", "processed_ms": 1, "lease_owner": None}),
        (ids[1], {"status": QUEUED, "outcome": "error: b", "lease_owner": None}),
        (ids[2], {"status": DONE, "outcome": "c", "processed_ms": 3, "lease_owner": None}),
        (ids[4], {"status": DONE, "outcome": "e", "processed_ms": 5, "lease_owner": None}),
    ])
    stored = await rows(state_db)
    assert [(stored[i].status, stored[i].outcome, stored[i].processed_ms,
             stored[i].lease_owner) for i in ids] == [
        (DONE, "a", 1, None), (QUEUED, "error: b", None, None), (DONE, "c", 3, None),
        (WORKING, None, None, "one"),  # not finished yet
        (WORKING, None, None, "two"),  # another worker's: left alone
    ]
    await finish_many(state_db.sessions, InboxMessage, "one", [])  # nothing to do


async def test_a_one_statement_claim_takes_the_oldest_and_holds_them(
    state_db: StateDB, ids: list[str]
) -> None:
    """claim_records: the same claim as claim_rows, as records, in one UPDATE … RETURNING."""

    async def take(owner: str, now: int = NOW + 10_000, limit: int = 10) -> list[Any]:
        return await claim_records(
            state_db.sessions, InboxMessage, owner=owner, now_ms=now, lease_ms=LEASE,
            limit=limit, order_column=InboxMessage.received_ms,
        )

    first = await take("one", limit=3)
    assert [row.id for row in first] == ids[:3]
    assert {(row.status, row.lease_owner, row.attempts, row.lease_until_ms) for row in first} \
        == {(WORKING, "one", 1, NOW + 10_000 + LEASE)}
    stored = await rows(state_db)
    assert [(stored[i].status, stored[i].lease_owner, stored[i].attempts) for i in ids[:3]] \
        == [(WORKING, "one", 1)] * 3
    assert [row.id for row in await take("two")] == ids[3:]
    assert await take("three") == []
    again = await take("three", now=NOW + 10_000 + LEASE + 1)
    assert [(row.id, row.attempts) for row in again] == [(i, 2) for i in ids]
