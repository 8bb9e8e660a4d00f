"""The service's schema migrations (its tables; the engine and sessions are plumbing.db)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from plumbing.db import SERVICE_MIGRATION_LOCK, is_current, upgrade_under_lock
from plumbing.schema_versions import SchemaTree

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


def _alembic_config(url: str) -> Any:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def schema_tree(url: str) -> SchemaTree:
    """The service's migrations (Alembic's default version table)."""
    return SchemaTree("service", _alembic_config(url), "alembic_version", "service_schema_releases")


# SQLite plans without statistics, and then takes an index led by `organisation_id` to be as
# selective as any other: for `organisation_id = ? AND manager_id = ?` or `organisation_id = ?
# AND id IN (…)` it seeks the organisation's index and reads every row of the organisation
# (an approver's team read all the organisation's relations). Every index led by
# `organisation_id` is described as what it is, one value for (nearly) all rows, in SQLite's
# own statistics table (which the planner reads, and which ANALYZE fills the same way), so a
# selective index is used whatever the organisation's size.
ROWS = 1_000_000


def _stat(columns: int, unique: bool) -> str:
    """sqlite_stat1's `stat` of an index led by organisation_id: the rows, then the rows per
    distinct value of its first 1, 2 … columns."""
    per_prefix = [ROWS] + [10] * (columns - 1)
    if unique:
        per_prefix[-1] = 1
    return " ".join(str(n) for n in [ROWS, *per_prefix])


# Every index of every table with its first column and its number of columns, in one statement
# (a PRAGMA statement per table and per index cost a service's start ~1,500 round trips).
_INDEXES = """
SELECT tables.name, indexes.name, indexes."unique",
       (SELECT count(*) FROM pragma_index_info(indexes.name)),
       (SELECT name FROM pragma_index_info(indexes.name) WHERE seqno = 0)
FROM sqlite_schema AS tables, pragma_index_list(tables.name) AS indexes
WHERE tables.type = 'table'
"""


async def _organisation_indexes_unselective(engine: AsyncEngine) -> None:
    if engine.dialect.name != "sqlite":
        return  # PostgreSQL keeps its statistics itself (autovacuum's ANALYZE)
    async with engine.begin() as connection:
        await connection.exec_driver_sql("ANALYZE sqlite_schema")  # the table, if missing
        indexes: list[Any] = list((await connection.exec_driver_sql(_INDEXES)).all())
        stats = [
            (str(table), str(index), _stat(int(columns), bool(unique)))
            for table, index, unique, columns, first in indexes
            if first == "organisation_id"
        ]
        if stats:
            await connection.exec_driver_sql(
                "DELETE FROM sqlite_stat1 WHERE tbl = ? AND idx = ?",
                [(table, index) for table, index, _ in stats])
            await connection.exec_driver_sql(
                "INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?, ?, ?)", stats)
    if (engine.url.database or ":memory:") != ":memory:":  # (disposing would lose it)
        await engine.dispose()  # connections opened after read the statistics


async def migrate(engine: AsyncEngine) -> None:
    """Bring the schema to the newest migration (alembic upgrade head); on SQLite, the
    planner's statistics of the organisation indexes."""
    await upgrade_under_lock(engine, schema_tree(str(engine.url)), SERVICE_MIGRATION_LOCK)
    await _organisation_indexes_unselective(engine)


async def service_schema_current(engine: AsyncEngine) -> bool:
    return await is_current(engine, schema_tree(str(engine.url)))
