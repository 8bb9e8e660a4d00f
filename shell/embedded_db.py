"""The embedded service's database for the `timebot service …` commands: migrated, its
sessions, disposed of after; refused (a clear message) when a hosted service is configured."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import click

from timebot.config import Settings

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker


@asynccontextmanager
async def embedded_sessions(settings: Settings) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    from plumbing.db import create_engine, session_factory
    from service.db import migrate

    if not settings.embedded:
        raise click.ClickException(
            "TIMEBOT_SERVICE_URL points at a hosted service; this command manages the embedded one"
        )
    engine = create_engine(settings.service_database_url)
    try:
        await migrate(engine)
        yield session_factory(engine)
    finally:
        await engine.dispose()
