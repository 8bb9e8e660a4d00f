"""Fresh databases already at the newest migration, for tests that only want a fresh, migrated
database (live servers, harnesses): each tree's migrations run once, into a template, instead
of at every server start (~2 s of a start under load). The app still migrates at start and
finds nothing to do. Tests of migrations, upgrades, restores and the schema check keep using
empty databases (tests.pg.create_pg_database).

A template is named by a hash of its tree's migration files and the release (which the table of
releases records), so that a change to either builds a new one.

PostgreSQL: `timebot_tmpl_<tree>_<hash>`, built once across xdist workers (and concurrent
sessions) under an exclusive advisory lock, under a temporary name and renamed when complete;
copies (`CREATE DATABASE … TEMPLATE`) take the lock shared, so a template is never dropped (a
build of another hash drops the old ones) nor half-built while copied. Nobody connects to a
template (ALLOW_CONNECTIONS false): PostgreSQL refuses to copy a database in use.

SQLite: a file per tree and hash in a cache directory, built under a name of its own and moved
into place (os.replace: a reader sees a complete file or none), in rollback-journal mode so that
the one file is the whole database; copied to where the server's settings put the database."""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import sqlite3
import tempfile
import uuid
from pathlib import Path
from typing import Any, Literal

from plumbing.db import create_engine, is_sqlite
from plumbing.release import VERSION
from tests.pg import PG_ADMIN_DSN, pg_url

Tree = Literal["service", "timebot"]

# Any key distinct from the app's migration locks (plumbing.db): "tmpl".
TEMPLATE_LOCK = 0x746D706C
BUILD_PREFIX = "timebot_tmplbuild_"
CACHE_DIR = Path(tempfile.gettempdir()) / f"timebot-test-templates-{os.getuid()}"


def _migrations_dir(tree: Tree) -> Path:
    if tree == "service":
        from service.db import MIGRATIONS_DIR
    else:
        from timebot.state.db import MIGRATIONS_DIR
    return MIGRATIONS_DIR


def tree_hash(tree: Tree) -> str:
    """The hash of the tree's migration files (paths and contents) and of the release."""
    digest = hashlib.sha256(VERSION.encode())
    root = _migrations_dir(tree)
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


async def _migrate(tree: Tree, url: str) -> None:
    engine = create_engine(url)
    try:
        if tree == "service":
            from service.db import migrate
        else:
            from timebot.state.db import migrate
        await migrate(engine)
    finally:
        await engine.dispose()


def template_name(tree: Tree) -> str:
    return f"timebot_tmpl_{tree}_{tree_hash(tree)}"


async def create_migrated_pg_database(tree: Tree) -> str:
    """A fresh PostgreSQL database at `tree`'s newest migration; returns its name."""
    import asyncpg

    name = f"timebot_test_{uuid.uuid4().hex[:12]}"
    template = template_name(tree)
    connection = await asyncpg.connect(PG_ADMIN_DSN)
    try:
        while True:
            await connection.execute("SELECT pg_advisory_lock_shared($1)", TEMPLATE_LOCK)
            try:
                if await _exists(connection, template):
                    await connection.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
                    return name
            finally:
                await connection.execute("SELECT pg_advisory_unlock_shared($1)", TEMPLATE_LOCK)
            await _build_pg_template(connection, tree, template)
    finally:
        await connection.close()


async def _exists(connection: Any, database: str) -> bool:
    found = await connection.fetchval(
        "SELECT 1 FROM pg_database WHERE datname = $1", database)
    return found is not None


async def _build_pg_template(connection: Any, tree: Tree, template: str) -> None:
    """Under the exclusive lock: unless another built it meanwhile, drops the tree's templates
    of other hashes and builds left half-done by a killed session, then builds `template`."""
    execute = connection.execute
    fetch = connection.fetch
    await execute("SELECT pg_advisory_lock($1)", TEMPLATE_LOCK)
    try:
        if await _exists(connection, template):
            return
        stale = await fetch(
            "SELECT datname FROM pg_database WHERE datname LIKE $1 OR datname LIKE $2",
            f"timebot\\_tmpl\\_{tree}\\_%", f"{BUILD_PREFIX.replace('_', chr(92) + '_')}%")
        for row in stale:
            await execute(f'DROP DATABASE IF EXISTS "{row["datname"]}" WITH (FORCE)')
        build = f"{BUILD_PREFIX}{uuid.uuid4().hex[:12]}"
        await execute(f'CREATE DATABASE "{build}"')
        await _migrate(tree, pg_url(build))
        # The migration's connections are closed, but their backends may not have exited yet:
        # no new one, and those that remain ended, before the rename (which wants none).
        await execute(f'ALTER DATABASE "{build}" WITH ALLOW_CONNECTIONS false')
        await execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", build)
        await _rename_when_unused(connection, build, template)
    finally:
        await execute("SELECT pg_advisory_unlock($1)", TEMPLATE_LOCK)


async def _rename_when_unused(connection: Any, database: str, new_name: str) -> None:
    import asyncpg

    for _ in range(200):
        try:
            await connection.execute(
                f'ALTER DATABASE "{database}" RENAME TO "{new_name}"')
            return
        except asyncpg.ObjectInUseError:  # a terminated backend not yet gone
            await asyncio.sleep(0.05)
    raise AssertionError(f"{database} still in use after its migration")


async def sqlite_template(tree: Tree) -> Path:
    """The migrated SQLite file of `tree` (built when missing); copy it, never open it."""
    path = CACHE_DIR / f"{tree}-{tree_hash(tree)}.db"
    if path.is_file():
        return path
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    build = CACHE_DIR / f"{tree}-{uuid.uuid4().hex[:12]}.building.db"
    try:
        await _migrate(tree, f"sqlite+aiosqlite:///{build}")
        _publish(build, path)
    finally:
        build.unlink(missing_ok=True)
    return path


def _publish(build: Path, path: Path) -> None:
    """Every connection to `build` is closed (its WAL checkpointed); in rollback-journal mode
    the file is the whole database (the app sets WAL again when it opens a copy)."""
    connection = sqlite3.connect(build)
    try:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.execute("PRAGMA journal_mode=DELETE")
    finally:
        connection.close()
    for suffix in ("-wal", "-shm", "-journal"):
        assert not os.path.exists(f"{build}{suffix}"), f"{build}{suffix} left"
    os.replace(build, path)


async def place_migrated_sqlite(url: str, tree: Tree) -> None:
    """When `url` is an SQLite file that does not exist yet (a fresh database), puts a copy of
    the tree's migrated template there."""
    from sqlalchemy.engine import make_url

    if not is_sqlite(url):
        return
    database = make_url(url).database
    if not database or database == ":memory:" or os.path.exists(database):  # noqa: ASYNC240
        return
    template = await sqlite_template(tree)
    os.makedirs(os.path.dirname(database), exist_ok=True)
    shutil.copyfile(template, database)
