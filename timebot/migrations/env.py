"""Alembic environment of the bot's database (version table: timebot_alembic_version)."""

from __future__ import annotations

from typing import Any

from alembic import context
from sqlalchemy import create_engine, pool

import timebot.state.away
import timebot.state.digests
import timebot.state.models
import timebot.state.org_models
import timebot.state.slack_models
import timebot.state.teams_models
from timebot.state.db import VERSION_TABLE
from timebot.state.models import StateBase

_ = timebot.state.models, timebot.state.slack_models, timebot.state.org_models
_ = timebot.state.teams_models, timebot.state.away, timebot.state.digests
target_metadata = StateBase.metadata


def _run(connection: Any) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=True,
        compare_type=True,
        version_table=VERSION_TABLE,
    )
    with context.begin_transaction():
        context.run_migrations()


connection = context.config.attributes.get("connection")
if connection is not None:
    _run(connection)
else:
    url = context.config.get_main_option("sqlalchemy.url") or ""
    engine = create_engine(url.replace("+aiosqlite", ""), poolclass=pool.NullPool)
    with engine.connect() as sync_connection:
        _run(sync_connection)
