"""Upgrading a large organisation's databases from the previous release to head.

- upgrade_10000_sqlite, upgrade_10000_postgresql: seconds of head's first command on the
  databases of 10,000 people that release 1.0.0 made (`timebot service init` and `service
  import`, run with the release's own code): the command migrates (service 0002 → head,
  timebot 0001 → head) and answers. Baseline: the same command on the same databases once
  upgraded (a start with nothing to migrate); each a command on the service's database
  (`service apikey`) and one on the bot's (`outbox status`). Noted beside: the rows of every
  table before and after (all carried) and the tables the upgrade added.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from bench.common import Figure, note
from bench.people_import import csv_text
from bench.people_import import run_timebot as _run

FIGURES = ("upgrade_10000_sqlite", "upgrade_10000_postgresql")
PEOPLE = 10_000


def _first_commands(env: dict[str, str]) -> float:
    """A command on each database (each migrates its own): the service's, the bot's."""
    return (_run(env, "service", "apikey", "--email", "p1@big.example")[0]
            + _run(env, "outbox", "status")[0])


def _rows(url: str) -> dict[str, int]:
    import asyncio

    from sqlalchemy import inspect, text

    from plumbing.db import create_engine

    async def count() -> dict[str, int]:
        engine = create_engine(url)
        try:
            async with engine.connect() as connection:
                tables = await connection.run_sync(lambda c: inspect(c).get_table_names())
                return {table: int((await connection.execute(
                    text(f'SELECT count(*) FROM "{table}"'))).scalar_one())
                    for table in sorted(tables) if not table.startswith("sqlite_")}
        finally:
            await engine.dispose()

    return asyncio.run(count())


def _one(backend: str, work: Path) -> Figure:
    from tests.upgrade.releases import RELEASES, release_env

    previous = list(RELEASES)[-1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TIMEBOT_", "SLACK_"))}
    env.update(TIMEBOT_DATA_DIR=str(work / "data"), TIMEBOT_SMTP_PORT="0",
               TIMEBOT_SECRET_KEY="bench-only-9fK2mQ7vX4pL8sR1wN6bZ3yT5cH0dGjA")
    databases: list[str] = []
    if backend == "postgresql":
        import asyncio

        from tests.pg import create_pg_database, pg_url

        databases = [asyncio.run(create_pg_database()) for _ in range(2)]
        env.update(TIMEBOT_SERVICE_DATABASE_URL=pg_url(databases[0]),
                   TIMEBOT_DATABASE_URL=pg_url(databases[1]))
    try:
        old = release_env(previous, env)
        _, made = _run(old, "service", "init", "--org", "Big", "--admin-name", "Ada",
                       "--admin-email", "ada@big.example")
        people = work / "people.csv"
        people.write_text(csv_text(PEOPLE))
        _run(old, "service", "import", "--org", json.loads(made)["organisation"]["id"],
             str(people))
        from timebot.config import load_settings

        settings = load_settings(env)
        urls = {"service": settings.service_database_url, "timebot": settings.database_url}
        before = {name: _rows(url) for name, url in urls.items()}
        upgrade = _first_commands(env)
        after = {name: _rows(url) for name, url in urls.items()}
        again = _first_commands(env)
        for name in urls:
            added = sorted(set(after[name]) - set(before[name]))
            carried = all(after[name][table] >= rows for table, rows in before[name].items())
            note(f"# {backend} {name}: {sum(before[name].values())} rows in "
                 f"{len(before[name])} tables before, all carried: {carried}; added: {added}; "
                 f"persons {after[name].get('persons', '-')}")
        return Figure(f"upgrade_10000_{backend}", upgrade, "s", again)
    finally:
        if databases:
            import asyncio

            from tests.pg import drop_pg_database

            for name in databases:
                asyncio.run(drop_pg_database(name))


def run(names: set[str]) -> list[Figure]:
    figures = []
    for backend in ("sqlite", "postgresql"):
        if f"upgrade_10000_{backend}" in names:
            with tempfile.TemporaryDirectory() as work:
                figures.append(_one(backend, Path(work)))
    return figures
