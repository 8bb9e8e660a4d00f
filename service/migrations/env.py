"""Alembic environment: run with a connection handed over by service.db.migrate, or a URL."""

from __future__ import annotations

from typing import Any

from alembic import context
from sqlalchemy import create_engine, pool

import service.models
from service.model_base import Base

_ = service.models
target_metadata = Base.metadata


def _run(connection: Any) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=True,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


connection = context.config.attributes.get("connection")
if connection is not None:
    _run(connection)
else:
    url = context.config.get_main_option("sqlalchemy.url") or ""
    sync_url = url.replace("+aiosqlite", "").replace("+asyncpg", "+psycopg")
    engine = create_engine(sync_url, poolclass=pool.NullPool)
    with engine.connect() as sync_connection:
        _run(sync_connection)
