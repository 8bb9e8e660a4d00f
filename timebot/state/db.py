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
from plumbing.schema_versions import SchemaTree

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"
VERSION_TABLE = "timebot_alembic_version"

__all__ = [
    "MIGRATIONS_DIR", "VERSION_TABLE", "create_engine", "insert_for", "insert_ignoring", "migrate",
    "read_only_engine",
    "schema_current",
    "schema_tree",
    "session_factory",
    "unit_of_work",
]


def _config() -> Any:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


def schema_tree() -> SchemaTree:
    """The bot's migrations (their own version table, beside the service's in a shared
    database)."""
    return SchemaTree("timebot", _config(), VERSION_TABLE, "timebot_schema_releases")


async def migrate(engine: AsyncEngine) -> None:
    await upgrade_under_lock(engine, schema_tree(), BOT_MIGRATION_LOCK)


async def schema_current(engine: AsyncEngine) -> bool:
    return await is_current(engine, schema_tree())
