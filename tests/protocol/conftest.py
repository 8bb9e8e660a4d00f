"""A fresh bot-state database per test module, on SQLite and on PostgreSQL; `outbox`, its
outbox emptied for each test."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from mail.queues.outbox import Outbox
from plumbing.clock import Clock
from tests.migrated import create_migrated_pg_database, place_migrated_sqlite
from tests.pg import drop_pg_database_soon, pg_url
from timebot.state.db import create_engine, migrate, session_factory
from timebot.state.models import OutboxMessage


@dataclass
class StateDB:
    backend: str
    url: str
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def state_db(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[StateDB]:
    backend: str = request.param
    database = None
    if backend == "postgresql":
        database = await create_migrated_pg_database("timebot")
        url = pg_url(database)
    else:
        url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('state') / 'bot.db'}"
        await place_migrated_sqlite(url, "timebot")
    engine = create_engine(url)
    await migrate(engine)  # (finds nothing to do, as the app's start)
    try:
        yield StateDB(backend, url, engine, session_factory(engine))
    finally:
        await engine.dispose()
        if database is not None:
            drop_pg_database_soon(database)


@pytest.fixture
async def outbox(state_db: StateDB) -> AsyncIterator[Outbox]:
    async with state_db.sessions() as session:
        await session.execute(delete(OutboxMessage))
        await session.commit()
    yield Outbox(state_db.sessions, Clock(frozen_ms=1_800_000_000_000))
