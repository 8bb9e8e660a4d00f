"""The service's schema migrations (its tables; the engine and sessions are plumbing.db)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from plumbing.db import SERVICE_MIGRATION_LOCK, is_current, upgrade_under_lock

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


def _alembic_config(url: str) -> Any:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


async def migrate(engine: AsyncEngine) -> None:
    """Bring the schema to the newest migration (alembic upgrade head)."""
    await upgrade_under_lock(engine, _alembic_config(str(engine.url)), SERVICE_MIGRATION_LOCK)


async def service_schema_current(engine: AsyncEngine) -> bool:
    return await is_current(engine, _alembic_config(str(engine.url)), "alembic_version")
