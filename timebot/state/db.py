"""The bot's database: engine, sessions, migrations (its own Alembic tree and version table,
so that it may share a PostgreSQL database with the embedded service)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from service.db import create_engine, insert_for, insert_ignoring, session_factory, unit_of_work

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"
VERSION_TABLE = "timebot_alembic_version"

__all__ = [
    "MIGRATIONS_DIR", "VERSION_TABLE", "create_engine", "insert_for", "insert_ignoring", "migrate",
    "session_factory",
    "unit_of_work",
]


async def migrate(engine: AsyncEngine) -> None:
    from alembic import command
    from alembic.config import Config

    def _upgrade(connection: Any) -> None:
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS_DIR))
        config.attributes["connection"] = connection
        command.upgrade(config, "head")

    async with engine.begin() as connection:
        await connection.run_sync(_upgrade)
