"""Migration 0007 (settled chat requests), from the schema before it with its rows: every Slack
and Teams row whose context holds an outcome is settled (at its creation), every other row
is not, and no row loses a value — on SQLite and PostgreSQL, through `migrate` as
`timebot serve` runs it at start."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from plumbing.db import create_engine
from tests.pg import create_pg_database, drop_pg_database, pg_url
from timebot.state.db import migrate, schema_tree

BEFORE = "0006"
NOW = 1_800_000_000_000
# (id, context JSON): decided, waiting, an empty outcome, context without one
ROWS = [("r1", '{"outcome": "Approved by Ann", "submitId": "s1"}', True),
        ("r2", '{"submitId": "s2"}', False),
        ("r3", '{"outcome": "", "submitId": "s3"}', False),
        ("r4", '{}', False)]


@pytest.fixture(params=["sqlite", "postgresql"])
async def engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    database = None
    if request.param == "postgresql":
        database = await create_pg_database()
        url = pg_url(database)
    else:
        url = f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}"
    engine = create_engine(url)
    try:
        yield engine
    finally:
        await engine.dispose()
        if database is not None:
            await drop_pg_database(database)


async def _upgrade_to(engine: AsyncEngine, revision: str) -> None:
    tree = schema_tree()

    def upgrade(connection: Any) -> None:
        tree.config.attributes["connection"] = connection
        command.upgrade(tree.config, revision)

    async with engine.begin() as connection:
        await connection.run_sync(upgrade)


async def test_decided_rows_are_settled_and_nothing_else_changes(engine: AsyncEngine) -> None:
    await _upgrade_to(engine, BEFORE)
    async with engine.begin() as connection:
        for number, (row_id, context, _) in enumerate(ROWS):
            common = {"id": row_id, "seq": number, "key": f"k{row_id}", "ref":
                      f"approval:s{number}:0:a", "context": context, "created": NOW + number}
            await connection.execute(text(
                "INSERT INTO slack_outgoing (id, seq, dedupe_key, method, channel, ref, payload,"
                " context, status, attempts, next_attempt_ms, created_ms, team_id, priority)"
                " VALUES (:id, :seq, :key, 'chat.postMessage', 'D1', :ref, '{}', :context,"
                " 'done', 1, :created, :created, 'T1', 1)"), common)
            await connection.execute(text(
                "INSERT INTO teams_outgoing (id, seq, dedupe_key, method, ref, context, status,"
                " attempts, next_attempt_ms, created_ms, tenant_id, organisation_id,"
                " conversation_id, service_url, activity, priority) VALUES (:id, :seq, :key,"
                " 'send', :ref, :context, 'done', 1, :created, :created, 't', 'o', 'c',"
                " 'https://x', '{}', 1)"), common)
    await migrate(engine)
    async with engine.connect() as connection:
        for table in ("slack_outgoing", "teams_outgoing"):
            found = (await connection.execute(text(
                f"SELECT id, settled_ms, created_ms, ref, status FROM {table} ORDER BY id"
            ))).all()
            assert [(row_id, settled) for row_id, settled, *_ in found] == [
                (row_id, NOW + number if decided else None)
                for number, (row_id, _, decided) in enumerate(ROWS)], table
            assert [tuple(rest) for _, _, *rest in found] == [
                (NOW + number, f"approval:s{number}:0:a", "done")
                for number in range(len(ROWS))], table
