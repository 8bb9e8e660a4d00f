"""A claim reads what it takes, not the table's history (#40): among thousands of sent rows
and a few queued ones, SQLite and PostgreSQL read the claimed rows by their key. (PostgreSQL
read every row of the table to test the OR of one IN per choice the claims once were: 3 to 5 ms
a claim in the Monday run, a third of the database's time.) Checked on the plans the databases
make for the statements the outbox and the Slack sender run, and on what a claim takes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, cast

import pytest
from sqlalchemy import BindParameter, literal
from sqlalchemy.sql import visitors

from tests.protocol.conftest import StateDB
from tests.protocol.table_history import table_history, whole_table_reads
from timebot.state.claim_choice import DONE, QUEUED
from timebot.state.lanes import BULK, INTERACTIVE
from timebot.state.models import OutboxMessage, SlackOutgoing
from timebot.state.queue import _claim_statements, _take_statement, claim_records

NOW = 1_800_000_000_000
SENT = 3000


def _outbox_row(number: int, status: str, priority: int) -> dict[str, Any]:
    return {"id": f"o{number:08d}", "message_id": f"<m{number}@example.com>", "kind": "review",
            "priority": priority, "envelope_from": "a@example.com", "rcpt_tos": ["b@example.com"],
            "subject": "s", "raw": b"x", "status": status, "attempts": 1, "failures": 0,
            "next_attempt_ms": NOW - 10_000_000 + number, "created_ms": NOW - 10_000_000}


def _slack_row(number: int, status: str, priority: int) -> dict[str, Any]:
    return {"id": f"s{number:08d}", "channel": "D1", "payload": {}, "seq": number,
            "method": "chat.postMessage", "priority": priority, "context": {},
            "status": status, "attempts": 1, "next_attempt_ms": NOW - 10_000_000 + number,
            "created_ms": NOW - 10_000_000}


@pytest.fixture
async def history(state_db: StateDB) -> AsyncIterator[StateDB]:
    """SENT rows done in each table, then three queued: two bulk, one interactive."""
    rows = {model: [row(n, DONE, BULK) for n in range(SENT)]
            + [row(SENT, QUEUED, BULK), row(SENT + 1, QUEUED, BULK),
               row(SENT + 2, QUEUED, INTERACTIVE)]
            for model, row in ((OutboxMessage, _outbox_row), (SlackOutgoing, _slack_row))}
    async with table_history(state_db, rows) as db:
        yield db


async def _plan(state_db: StateDB, statement: Any) -> list[str]:
    """The plan's lines for `statement` with a claim's values."""
    values = {"claim_now_ms": NOW, "claim_limit": 20, "claim_owner": "w",
              "claim_until_ms": NOW + 60_000}

    def valued(element: Any) -> Any:
        if isinstance(element, BindParameter) and element.key in values:
            return literal(values[element.key], element.type)
        return None

    bound = cast(Any, visitors.replacement_traverse)(statement, {}, valued)
    sql = str(bound.compile(dialect=state_db.engine.dialect,
                            compile_kwargs={"literal_binds": True}))
    explain = "EXPLAIN " if state_db.backend == "postgresql" else "EXPLAIN QUERY PLAN "
    async with state_db.engine.connect() as connection:
        rows = (await connection.exec_driver_sql(explain + sql)).all()
        await connection.rollback()
    return [str(row[-1]) for row in rows]


def _whole_table_read(plan: list[str], table: str) -> list[str]:
    """The plan's lines that read every row of `table` (not one of the choices' subqueries
    reading their index in order: those stop at the limit)."""
    return whole_table_reads(plan, table)


async def test_the_outbox_claim_reads_the_rows_it_takes_by_key(history: StateDB) -> None:
    statement = _take_statement(
        OutboxMessage, OutboxMessage.next_attempt_ms, OutboxMessage.next_attempt_ms, None,
        OutboxMessage.priority, OutboxMessage.attempted_ms, False)
    plan = await _plan(history, statement)
    assert not _whole_table_read(plan, "outbox_messages"), "\n".join(plan)
    rows = await claim_records(
        history.sessions, OutboxMessage, owner="w", now_ms=NOW, lease_ms=60_000, limit=20,
        due_column=OutboxMessage.next_attempt_ms, order_column=OutboxMessage.next_attempt_ms,
        priority_column=OutboxMessage.priority, claimed_at_column=OutboxMessage.attempted_ms)
    assert [row.id for row in rows] == [f"o{SENT + 2:08d}", f"o{SENT:08d}", f"o{SENT + 1:08d}"]


async def test_the_slack_claim_reads_the_rows_it_takes_by_key(history: StateDB) -> None:
    mine = SlackOutgoing.team_id.is_(None)
    choose, _ = _claim_statements(SlackOutgoing, SlackOutgoing.next_attempt_ms,
                                  SlackOutgoing.seq, SlackOutgoing.priority, mine)
    plan = await _plan(history, choose)
    assert not _whole_table_read(plan, "slack_outgoing"), "\n".join(plan)
