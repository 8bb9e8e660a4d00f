"""Fresh PostgreSQL databases for tests (trust auth on the machine's server)."""

from __future__ import annotations

import os
import uuid

PG_ADMIN_DSN = os.environ.get("TIMEBOT_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")


async def create_pg_database() -> str:
    """A fresh PostgreSQL database; returns its name."""
    import asyncpg

    name = f"timebot_test_{uuid.uuid4().hex[:12]}"
    connection = await asyncpg.connect(PG_ADMIN_DSN)
    try:
        await connection.execute(f'CREATE DATABASE "{name}"')
    finally:
        await connection.close()
    return name


async def drop_pg_database(name: str) -> None:
    import asyncpg

    connection = await asyncpg.connect(PG_ADMIN_DSN)
    try:
        await connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await connection.close()


def pg_url(database: str) -> str:
    base = PG_ADMIN_DSN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://")
    return f"{base}/{database}"
