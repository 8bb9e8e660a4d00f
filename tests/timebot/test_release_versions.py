"""Which release runs, said by the CLI, /healthz and /metrics; and an older release opened on
a database that a newer one migrated: refused at start with a message that names both
releases, before any write; a running process whose database moves ahead stays ready."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from plumbing.release import VERSION
from shell.build_info import schema_revisions
from tests.pg import PG_ADMIN_DSN, create_pg_database, drop_pg_database, pg_url
from tests.support import TEST_SECRET_KEY, LiveServer, start_live_server, stop_live_server
from tests.timebot.test_cli import cli_env, timebot
from timebot.config import load_settings

FUTURE = "9.9.0"


async def test_the_version_is_said_by_the_command(tmp_path: Path) -> None:
    run = await timebot(cli_env(tmp_path), "--version")
    assert run.code == 0, run.err
    assert run.out.strip() == f"timebot {VERSION}"


async def test_healthz_and_metrics_name_the_release_and_schema(
    live: LiveServer, http: httpx.AsyncClient
) -> None:
    schema = schema_revisions(live.app.state.runtime.settings)
    assert schema.startswith("service:") and ",timebot:" in schema
    health = (await http.get(f"{live.base_url}/healthz")).json()
    assert health == {"status": "ok", "version": VERSION, "schema": schema}
    metrics = (await http.get(f"{live.base_url}/metrics")).text
    assert f'timebot_build_info{{schema="{schema}",version="{VERSION}"}} 1.0' in metrics


async def _move_ahead(url: str, version_table: str, releases_table: str) -> None:
    """What a future release's migration leaves: a revision this code does not know, and the
    row that names the release which wrote it."""
    from plumbing.db import create_engine

    engine = create_engine(url)
    try:
        async with engine.begin() as connection:
            await connection.execute(text(f"UPDATE {version_table} SET version_num = '0099'"))
            await connection.execute(
                text(f"INSERT INTO {releases_table} VALUES ('0099', :version, 0)"),
                {"version": FUTURE})
    finally:
        await engine.dispose()


async def _fingerprint(tmp_path: Path, databases: list[str]) -> str:
    """Every row of the databases: SQLite's files, or PostgreSQL's dump of its data."""
    if not databases:
        return "".join(hashlib.sha256((tmp_path / name).read_bytes()).hexdigest()
                       for name in ("service.db", "bot.db"))
    dumps = []
    for name in databases:
        process = await asyncio.create_subprocess_exec(
            "pg_dump", "--data-only", "--no-comments", PG_ADMIN_DSN.rsplit("/", 1)[0] + f"/{name}",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
        out, _ = await process.communicate()
        assert process.returncode == 0
        rows = b"\n".join(line for line in out.splitlines()  # (less its random psql keys)
                           if not line.startswith((b"\\restrict", b"\\unrestrict")))
        dumps.append(hashlib.sha256(rows).hexdigest())
    return "".join(dumps)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_an_older_release_refuses_a_newer_schema_naming_both(
    backend: str, tmp_path: Path
) -> None:
    extra: dict[str, str] = {"TIMEBOT_SECRET_KEY": TEST_SECRET_KEY}
    databases: list[str] = []
    if backend == "postgresql":
        databases = [await create_pg_database(), await create_pg_database()]
        extra.update(TIMEBOT_SERVICE_DATABASE_URL=pg_url(databases[0]),
                     TIMEBOT_DATABASE_URL=pg_url(databases[1]))
    env = cli_env(tmp_path, **extra)
    try:
        made = await timebot(env, "service", "init", "--org", "Acme", "--admin-name", "Ada",
                             "--admin-email", "ada@example.com")
        assert made.code == 0, made.err
        settings = load_settings(env)
        await _move_ahead(settings.service_database_url, "alembic_version",
                          "service_schema_releases")
        await _move_ahead(settings.database_url, "timebot_alembic_version",
                          "timebot_schema_releases")
        before = await _fingerprint(tmp_path, databases)
        for args in (["serve"], ["service", "apikey", "--email", "ada@example.com"]):
            run = await timebot(env, *args)
            assert run.code == 1, (run.out, run.err)
            assert f"written by timebot {FUTURE}" in run.err, run.err
            assert f"this is timebot {VERSION}" in run.err and "Traceback" not in run.err
            assert "nothing was changed" in run.err
        assert await _fingerprint(tmp_path, databases) == before
    finally:
        for name in databases:
            await drop_pg_database(name)


async def test_a_process_stays_ready_when_a_newer_release_migrates_under_it(
    tmp_path: Path,
) -> None:
    live = await start_live_server("sqlite", tmp_path, migrated=False)
    try:
        settings = live.app.state.runtime.settings
        await _move_ahead(settings.database_url, "timebot_alembic_version",
                          "timebot_schema_releases")
        async with httpx.AsyncClient(timeout=30) as http:
            ready = await http.get(f"{live.base_url}/readyz")
        assert ready.status_code == 200, ready.text
    finally:
        await stop_live_server(live)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_each_release_that_migrates_is_recorded_once(backend: str, tmp_path: Path) -> None:
    from plumbing.db import create_engine
    from service.db import migrate as migrate_service
    from service.db import schema_tree as service_tree
    from timebot.state.db import migrate as migrate_bot
    from timebot.state.db import schema_tree as bot_tree

    name = await create_pg_database() if backend == "postgresql" else None
    engine = create_engine(pg_url(name) if name else f"sqlite+aiosqlite:///{tmp_path / 'x.db'}")
    try:
        for _ in range(2):  # a second start finds its release recorded
            await migrate_service(engine)
            await migrate_bot(engine)
        for table, tree in (("service_schema_releases", service_tree(str(engine.url))),
                            ("timebot_schema_releases", bot_tree())):
            async with engine.connect() as connection:
                rows = (await connection.execute(
                    text(f"SELECT revision, version FROM {table}"))).all()
            assert [tuple(row) for row in rows] == [(head, VERSION) for head in tree.heads()]
    finally:
        await engine.dispose()
        if name:
            await drop_pg_database(name)
