"""The two databases of a backup: SQLite copied with its online backup API (a consistent
snapshot while a server writes, WAL), PostgreSQL dumped with pg_dump and put back with
pg_restore; their schema revisions and whether a restore's target is empty."""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlencode

from sqlalchemy import make_url

from plumbing.db import is_sqlite
from shell.backup_manifest import BackupError
from timebot.config import Settings
from timebot.state.db import VERSION_TABLE as BOT_VERSION_TABLE

SERVICE_VERSION_TABLE = "alembic_version"
LISTED = 5  # tables named in a refusal
_TABLES = """
SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
ORDER BY c.relname
"""


@dataclass(frozen=True)
class Database:
    name: str  # "bot" or "service"
    url: str
    variable: str  # the setting that names it
    version_table: str

    @property
    def kind(self) -> str:
        return "sqlite" if is_sqlite(self.url) else "postgresql"

    @property
    def sqlite_path(self) -> Path:
        path = make_url(self.url).database or ":memory:"
        if path == ":memory:":
            raise BackupError(f"{self.variable} is an in-memory database: nothing to back up")
        return Path(path)

    @property
    def pg(self) -> PgAddress:
        return PgAddress.of(self.url)

    def label(self) -> str:
        where = str(self.sqlite_path) if self.kind == "sqlite" else self.pg.label
        return f"the {self.name} database ({self.variable}, {where})"


def databases_of(settings: Settings) -> list[Database]:
    """The bot's database, then the embedded service's (none against a hosted service): the
    bot's first, so that what the service did after, the bot's reconciler finds on start."""
    found = [Database("bot", settings.database_url, "TIMEBOT_DATABASE_URL", BOT_VERSION_TABLE)]
    if settings.embedded:
        found.append(Database("service", settings.service_database_url,
                              "TIMEBOT_SERVICE_DATABASE_URL", SERVICE_VERSION_TABLE))
    return found


@dataclass(frozen=True)
class PgAddress:
    """A postgresql+asyncpg:// URL as libpq's tools take it: the password apart (PGPASSWORD,
    never on a command line) and asyncpg's `ssl` as libpq's `sslmode`."""

    dsn: str
    password: str | None
    label: str  # host:port/database

    @classmethod
    def of(cls, url: str) -> PgAddress:
        parsed = make_url(url)
        query = {("sslmode" if key == "ssl" else key): value if isinstance(value, str)
                 else value[-1] for key, value in parsed.query.items()}
        host = parsed.host or "localhost"
        port = parsed.port or 5432
        user = f"{quote(parsed.username, safe='')}@" if parsed.username else ""
        dsn = f"postgresql://{user}{host}:{port}/{quote(parsed.database or '', safe='')}"
        if query:
            dsn += f"?{urlencode(query)}"
        return cls(dsn, parsed.password, f"{host}:{port}/{parsed.database}")

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        if self.password is not None:
            env["PGPASSWORD"] = self.password
        return env


# --- SQLite ---------------------------------------------------------------------------------

def _sqlite_revision(connection: sqlite3.Connection, table: str) -> str | None:
    try:
        row = connection.execute(f"SELECT version_num FROM {table}").fetchone()
    except sqlite3.OperationalError:  # no such table: an empty schema
        return None
    return None if row is None else str(row[0])


def sqlite_snapshot(database: Database) -> sqlite3.Connection:
    """A read transaction begun on the database: the moment its copy shows (WAL: writers go
    on meanwhile). Both databases' are begun before either is copied, so that the two show
    nearly the same moment."""
    source_path = database.sqlite_path
    if not source_path.is_file():
        raise BackupError(f"{database.label()} does not exist: has timebot run with these "
                          "settings?")
    try:
        source = sqlite3.connect(f"file:{quote(str(source_path))}?mode=ro", uri=True,
                                 timeout=60, isolation_level=None, check_same_thread=False)
        source.execute("BEGIN")
        source.execute("SELECT count(*) FROM sqlite_schema").fetchone()  # the snapshot
        return source
    except sqlite3.Error as error:
        raise BackupError(f"{database.label()} cannot be read: {error}") from None


def sqlite_copy(database: Database, snapshot: sqlite3.Connection, destination: Path
                ) -> str | None:
    """The snapshot copied with the online backup API into one self-contained file; returns
    its schema revision."""
    try:
        target = sqlite3.connect(destination)
        try:
            snapshot.backup(target)  # within the snapshot's read transaction
            target.execute("PRAGMA journal_mode=DELETE")
            return _sqlite_revision(target, database.version_table)
        finally:
            target.close()
    except sqlite3.Error as error:
        raise BackupError(f"{database.label()} could not be copied: {error}") from None


def sqlite_revision_of_file(path: Path, table: str) -> str | None:
    connection = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)
    try:
        return _sqlite_revision(connection, table)
    finally:
        connection.close()


def sqlite_tables(database: Database) -> list[str]:
    """The tables of the target SQLite file (none when it does not exist)."""
    path = database.sqlite_path
    if not path.exists():
        wal = Path(f"{path}-wal")
        return [wal.name] if wal.exists() and wal.stat().st_size else []
    try:
        connection = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)
        try:
            return [str(name) for (name,) in connection.execute(
                "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")]
        finally:
            connection.close()
    except sqlite3.Error as error:
        raise BackupError(f"{database.label()} cannot be read: {error}") from None


def sqlite_restore(source: Path, database: Database) -> None:
    """The backup's file put in place under the target's name (written beside it, renamed)."""
    target = database.sqlite_path
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    for suffix in ("-wal", "-shm", "-journal"):  # left by an empty database opened before
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    copy_into_place(source, target)


def copy_into_place(source: Path, target: Path) -> None:
    """`source` copied to `target` (mode 0600) whole or not at all: written beside, renamed."""
    partial = target.with_name(f".{target.name}.restoring-{uuid.uuid4().hex[:8]}")
    try:
        shutil.copyfile(source, partial)
        partial.chmod(0o600)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


# --- PostgreSQL -----------------------------------------------------------------------------

async def _pg_connect(database: Database) -> object:
    import asyncpg

    address = database.pg
    try:
        return await asyncpg.connect(address.dsn, password=address.password, timeout=30)
    except (OSError, asyncpg.PostgresError, TimeoutError) as error:
        raise BackupError(f"cannot reach {database.label()}: {error}") from None


async def pg_revision(database: Database) -> str | None:
    connection = await _pg_connect(database)
    try:
        return await connection.fetchval(  # type: ignore[attr-defined,no-any-return]
            f"SELECT version_num FROM {database.version_table}")
    except Exception as error:  # asyncpg's UndefinedTableError: an empty schema
        if type(error).__name__ == "UndefinedTableError":
            return None
        raise BackupError(f"{database.label()}: {error}") from None
    finally:
        await connection.close()  # type: ignore[attr-defined]


async def pg_tables(database: Database) -> list[str]:
    connection = await _pg_connect(database)
    try:
        rows = await connection.fetch(_TABLES)  # type: ignore[attr-defined]
        return [str(row[0]) for row in rows]
    finally:
        await connection.close()  # type: ignore[attr-defined]


async def _run_tool(database: Database, argv: list[str], what: str) -> None:
    tool = argv[0]
    try:
        process = await asyncio.create_subprocess_exec(
            *argv, env=database.pg.environment(),
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    except FileNotFoundError:
        raise BackupError(f"{tool} is not installed (or not on PATH): install the PostgreSQL "
                          "client tools, of the server's version or newer") from None
    _, stderr = await process.communicate()
    if process.returncode != 0:
        lines = [line for line in stderr.decode(errors="replace").splitlines() if line.strip()]
        reason = lines[-1] if lines else f"exit status {process.returncode}"
        raise BackupError(f"{tool} of {database.label()} failed {what}: {reason}")


async def pg_dump(database: Database, destination: Path) -> None:
    """One consistent snapshot of the whole database (pg_dump reads in one transaction)."""
    await _run_tool(database, ["pg_dump", "--format=custom", "--no-owner", "--no-privileges",
                               f"--file={destination}", f"--dbname={database.pg.dsn}"], "")


async def pg_restore(source: Path, database: Database) -> None:
    """Into an empty database, in one transaction: a failure leaves it empty."""
    await _run_tool(database, ["pg_restore", "--no-owner", "--no-privileges",
                               "--single-transaction", "--exit-on-error",
                               f"--dbname={database.pg.dsn}", str(source)],
                    f"(nothing was restored into it) from {source}")


async def revision(database: Database) -> str | None:
    if database.kind == "sqlite":
        return await asyncio.to_thread(
            sqlite_revision_of_file, database.sqlite_path, database.version_table)
    return await pg_revision(database)


async def tables_of(database: Database) -> list[str]:
    if database.kind == "sqlite":
        return await asyncio.to_thread(sqlite_tables, database)
    return await pg_tables(database)


def same_database(first: Database, second: Database) -> bool:
    if first.kind != second.kind:
        return False
    if first.kind == "sqlite":
        return first.sqlite_path.resolve() == second.sqlite_path.resolve()
    return first.pg.label == second.pg.label


def listed(names: list[str]) -> str:
    more = len(names) - LISTED
    return ", ".join(names[:LISTED]) + (f" and {more} more" if more > 0 else "")
