"""The bot's database: engine, sessions, migrations (its own Alembic tree and version table,
so that it may share a PostgreSQL database with the embedded service)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from plumbing.db import (
    BOT_MIGRATION_LOCK,
    create_engine,
    insert_for,
    insert_ignoring,
    is_current,
    read_only_engine,
    session_factory,
    unit_of_work,
    upgrade_under_lock,
)

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"
VERSION_TABLE = "timebot_alembic_version"

__all__ = [
    "MIGRATIONS_DIR", "VERSION_TABLE", "create_engine", "insert_for", "insert_ignoring", "migrate",
    "read_only_engine",
    "schema_current",
    "session_factory",
    "unit_of_work",
]


def _config() -> Any:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


async def migrate(engine: AsyncEngine) -> None:
    await upgrade_under_lock(engine, _config(), BOT_MIGRATION_LOCK)


async def schema_current(engine: AsyncEngine) -> bool:
    return await is_current(engine, _config(), VERSION_TABLE)
