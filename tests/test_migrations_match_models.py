"""The migrations and the models say the same schema: a database migrated to the newest
revision is what the models describe (Alembic's autogenerate finds no difference), on SQLite
and PostgreSQL, for the service's tree and the bot's. A model changed without its migration
(`make migration`) fails here."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import MetaData
from sqlalchemy.ext.asyncio import AsyncEngine

from plumbing.db import create_engine
from tests.pg import create_pg_database, drop_pg_database, pg_url


@pytest.fixture(params=["sqlite", "postgresql"])
async def engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    if request.param == "sqlite":
        engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}")
        yield engine
        await engine.dispose()
        return
    name = await create_pg_database()
    engine = create_engine(pg_url(name))
    try:
        yield engine
    finally:
        await engine.dispose()
        await drop_pg_database(name)


def _service_tree() -> tuple[MetaData, str]:
    import service.models
    from service.model_base import Base

    _ = service.models
    return Base.metadata, "alembic_version"


def _bot_tree() -> tuple[MetaData, str]:
    import timebot.state.away
    import timebot.state.digests
    import timebot.state.org_models
    import timebot.state.slack_models
    import timebot.state.teams_models
    from timebot.state.db import VERSION_TABLE
    from timebot.state.models import StateBase

    _ = timebot.state.away, timebot.state.digests, timebot.state.org_models
    _ = timebot.state.slack_models, timebot.state.teams_models
    return StateBase.metadata, VERSION_TABLE


async def _differences(engine: AsyncEngine, metadata: MetaData, version_table: str) -> list[Any]:
    def compare(connection: Any) -> list[Any]:
        context = MigrationContext.configure(connection, opts={
            "compare_type": True, "version_table": version_table,
            "include_name": _not_sqlite_statistics,
        })
        return list(compare_metadata(context, metadata))

    async with engine.connect() as connection:
        return await connection.run_sync(compare)


def _not_sqlite_statistics(name: str | None, kind: str, _parents: Any) -> bool:
    """SQLite's planner statistics (service.db fills sqlite_stat1) are no table of a tree."""
    return not (kind == "table" and name is not None and name.startswith("sqlite_stat"))


async def test_the_service_migrations_make_what_its_models_say(engine: AsyncEngine) -> None:
    from service.db import migrate

    await migrate(engine)
    metadata, version_table = _service_tree()
    assert await _differences(engine, metadata, version_table) == []


async def test_the_bot_migrations_make_what_its_models_say(engine: AsyncEngine) -> None:
    from timebot.state.db import migrate

    await migrate(engine)
    metadata, version_table = _bot_tree()
    assert await _differences(engine, metadata, version_table) == []
