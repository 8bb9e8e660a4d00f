"""The Slack sender's tests' fixtures: its database on each backend, and a fake Slack.

    from tests.bot.slack.sender_fixtures import fake_slack, state_sessions  # noqa: F401"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from tests.bot.slack.fake_slack import FakeSlack
from tests.migrated import create_migrated_pg_database, place_migrated_sqlite
from tests.pg import drop_pg_database_soon, pg_url
from timebot.state.db import create_engine, migrate, session_factory


@pytest.fixture(name="sessions", params=["sqlite", "postgresql"])
async def state_sessions(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    database = (await create_migrated_pg_database("timebot") if request.param == "postgresql"
                else None)
    url = pg_url(database) if database else f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}"
    await place_migrated_sqlite(url, "timebot")
    engine = create_engine(url)
    await migrate(engine)  # (finds nothing to do, as the app's start)
    try:
        yield session_factory(engine)
    finally:
        await engine.dispose()
        if database:
            drop_pg_database_soon(database)


@pytest.fixture(name="fake")
async def fake_slack() -> AsyncIterator[FakeSlack]:
    started = await FakeSlack.start()
    try:
        yield started
    finally:
        await started.stop()
