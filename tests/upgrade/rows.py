"""Every row of a database as a fingerprint: per table, its row count and a sha256 of its rows
(each row's values in the columns named, as JSON, the lines sorted). Taken of the release's
databases when the fixture is made, and of the same databases once head migrated them: the
same columns read back the same values. Read with the drivers alone (sqlite3, asyncpg), not
with either version's code."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import asyncpg

from tests.pg import PG_ADMIN_DSN

# Alembic's own tables: the revision they hold is what an upgrade changes.
VERSION_TABLES = ("alembic_version", "timebot_alembic_version")

Tables = dict[str, dict[str, Any]]  # table -> {"columns": [...], "rows": n, "sha256": hex}


def _value(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"hex": bytes(value).hex()}
    return value


def _fingerprint(columns: list[str], rows: list[tuple[Any, ...]]) -> dict[str, Any]:
    lines = sorted(json.dumps([_value(v) for v in row], default=str) for row in rows)
    digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()
    return {"columns": columns, "rows": len(lines), "sha256": digest}


def sqlite_tables(path: Path, wanted: Tables | None = None) -> Tables:
    """The tables of a SQLite file (or those of `wanted`, in its columns), read-only."""
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        if wanted is None:
            names = [row[0] for row in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'"
                " AND name NOT LIKE 'sqlite_%' ORDER BY name")]
            wanted = {name: {"columns": [row[1] for row in connection.execute(
                f'PRAGMA table_info("{name}")')]} for name in names
                if name not in VERSION_TABLES}
        found: Tables = {}
        for name, table in wanted.items():
            columns = list(table["columns"])
            select = ", ".join(f'"{column}"' for column in columns)
            found[name] = _fingerprint(
                columns, list(connection.execute(f'SELECT {select} FROM "{name}"')))
        return found
    finally:
        connection.close()


def pg_dsn(database: str) -> str:
    return f"{PG_ADMIN_DSN.rsplit('/', 1)[0]}/{database}"


async def pg_tables(database: str, wanted: Tables | None = None) -> Tables:
    """The tables of a PostgreSQL database's public schema (or those of `wanted`)."""
    connection = await asyncpg.connect(pg_dsn(database))
    try:
        if wanted is None:
            rows = await connection.fetch(
                "SELECT table_name, column_name FROM information_schema.columns"
                " WHERE table_schema = 'public' ORDER BY table_name, ordinal_position")
            wanted = {}
            for row in rows:
                if row["table_name"] not in VERSION_TABLES:
                    wanted.setdefault(row["table_name"], {"columns": []})["columns"].append(
                        row["column_name"])
        found: Tables = {}
        for name, table in sorted(wanted.items()):
            columns = list(table["columns"])
            select = ", ".join(f'"{column}"' for column in columns)
            records = await connection.fetch(f'SELECT {select} FROM "{name}"')
            found[name] = _fingerprint(columns, [tuple(record) for record in records])
        return found
    finally:
        await connection.close()


def differences(expected: Tables, found: Tables) -> list[str]:
    """What does not read back the same, one line a table."""
    return [f"{name}: {expected[name]['rows']} rows expected, {found.get(name, {}).get('rows')}"
            " found, or other values" for name in sorted(expected)
            if found.get(name, {}).get("sha256") != expected[name]["sha256"]]
