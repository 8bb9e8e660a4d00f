"""Databases: the async engine (SQLite with WAL on the loop thread, or PostgreSQL), the
unit of work, dialect-aware inserts, and migrations run under a lock."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import event, make_url
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from plumbing.pg_pool import replace_dead_connections_on_checkout
from plumbing.schema_versions import (
    Position,
    SchemaTree,
    position,
    record_release,
    refuse_if_newer,
)
from plumbing.sqlite_inloop import connector

LOCK_TIMEOUT_S = 30.0


def is_busy(error: BaseException) -> bool:
    """The database could not be had in time, through no fault of the request: no pooled
    connection within the pool's timeout, or SQLite's write lock held by another writer for
    longer than the lock timeout ("database is locked"). Busy, not broken: try again."""
    if isinstance(error, PoolTimeout):
        return True
    if isinstance(error, OperationalError | sqlite3.OperationalError):
        text = str(getattr(error, "orig", None) or error).lower()
        return "database is locked" in text or "database is busy" in text
    return False


def is_sqlite(url: str) -> bool:
    return url.startswith("sqlite")


def create_engine(url: str, *, read_only: bool = False, **kwargs: Any) -> AsyncEngine:
    """An async engine; SQLite gets WAL, foreign keys and real transactions (SAVEPOINTs work).

    On SQLite, writers begin with BEGIN IMMEDIATE (the write lock up front: no deadlock when a
    read lock would be upgraded). `read_only=True` makes an engine for transactions that only
    read: they begin deferred, so in WAL mode they run beside a writer instead of queuing."""
    if is_sqlite(url):
        # Statements run on the loop thread; waits for the write lock are asynchronous
        # (plumbing.sqlite_inloop). Connections come in autocommit mode: pysqlite's own
        # transaction handling breaks SAVEPOINT, so transactions are begun below.
        path = make_url(url).database or ":memory:"
        # How long a transaction waits for the write lock before "database is locked" (the
        # URL's `timeout`, as pysqlite reads it; 30 s unless told): answered 503 by the HTTP
        # app (shell.busy), retried by the queues.
        lock_timeout = float(str(make_url(url).query.get("timeout", LOCK_TIMEOUT_S)))
        # As on PostgreSQL, 20 connections are kept: a burst of mail replies holds more than
        # SQLAlchemy's default 5, and each connection made again for the next burst opens the
        # file, sets its pragmas and parses the schema anew.
        kwargs.setdefault("pool_size", 20)
        kwargs.setdefault("max_overflow", 10)
        engine = create_async_engine(url, async_creator=connector(path, timeout=lock_timeout),
                                     **kwargs)

        @event.listens_for(engine.sync_engine, "connect")
        def _on_connect(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

        begin = "BEGIN" if read_only else "BEGIN IMMEDIATE"

        def _begin(dbapi_connection: Any) -> None:
            # On the driver's cursor: through `exec_driver_sql` (a "begin" listener) each BEGIN
            # cost a statement's whole execution context, a tenth of a reply's statements.
            # Here, in the dialect's do_begin, a failure (the write lock not had within the
            # timeout) is still wrapped as SQLAlchemy's OperationalError.
            cursor = dbapi_connection.cursor()
            try:
                cursor.execute(begin)
            finally:
                cursor.close()

        engine.sync_engine.dialect.do_begin = _begin  # type: ignore[method-assign]

        return engine
    # At most 30 connections an engine, as before; but 20 are kept rather than 10: a burst of
    # mail replies holds 15 at once, and a connection closed after each burst is made again
    # (a connect, its codecs and its prepared statements) for the next one.
    kwargs.setdefault("pool_size", 20)
    kwargs.setdefault("max_overflow", 10)
    # No pre-ping (three round trips a checkout): dead connections are replaced at checkout
    # from what asyncpg already knows (plumbing.pg_pool).
    kwargs.setdefault("pool_pre_ping", False)
    connect_args = dict(kwargs.pop("connect_args", {}))
    # Short OLTP queries: JIT compiling a plan whose estimate is high costs more than it saves.
    connect_args["server_settings"] = {"jit": "off", **connect_args.get("server_settings", {})}
    engine = create_async_engine(url, connect_args=connect_args, **kwargs)
    if not kwargs["pool_pre_ping"]:
        replace_dead_connections_on_checkout(engine)
    return engine


def read_only_engine(url: str, **kwargs: Any) -> AsyncEngine | None:
    """A second engine for the transactions of `url`'s database that only read, where one
    helps: SQLite in a file (its readers then run beside a writer, WAL). None on PostgreSQL
    (MVCC: readers never wait for writers; the one engine serves them) and for an in-memory
    SQLite database (a second engine would open another, empty, database)."""
    if not is_sqlite(url) or (make_url(url).database or ":memory:") == ":memory:":
        return None
    kwargs.setdefault("pool_size", 10)
    return create_engine(url, read_only=True, **kwargs)


def insert_for(session: AsyncSession) -> Any:
    """The session's dialect's `insert` (PostgreSQL or SQLite), the one with
    `on_conflict_do_nothing` / `on_conflict_do_update`."""
    return pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert


_INSERTS_IGNORING: dict[tuple[str, str, tuple[str, ...]], Any] = {}


def insert_ignoring(session: AsyncSession, table: Any, conflict: tuple[str, ...]) -> Any:
    """`INSERT INTO table … ON CONFLICT (conflict) DO NOTHING` for the session's dialect (a
    plain INSERT when `conflict` is empty): a Core statement built once, its values given as
    parameters at execute. Its rowcount says whether the row went in."""
    table = getattr(table, "__table__", table)
    dialect = session.get_bind().dialect.name
    key = (dialect, table.name, conflict)
    statement = _INSERTS_IGNORING.get(key)
    if statement is None:
        statement = insert_for(session)(table)
        if conflict:
            statement = statement.on_conflict_do_nothing(index_elements=list(conflict))
        _INSERTS_IGNORING[key] = statement
    return statement


async def write_rows(session: AsyncSession, statement: Any, rows: Any) -> None:
    """A Core write (an INSERT built once) in the session's transaction, at once. Unlike
    `session.execute`, it does not first flush what the session has pending: rows written this
    way refer only to rows already in the database, and the pending changes are written by
    the caller's next flush."""
    connection = await session.connection()
    await connection.execute(statement, rows)


def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False, autoflush=True)


@asynccontextmanager
async def unit_of_work(
    sessions: async_sessionmaker[AsyncSession],
) -> AsyncIterator[AsyncSession]:
    """One session, committed on success and rolled back on error.

    After a commit the session is closed directly: it holds no transaction then, so closing
    it only hands the connection back to the pool, without I/O (no await that a cancellation
    could interrupt). `async with session` would close it in a task of its own, shielded from
    cancellation: a task and two turns of the event loop per transaction, kept for the error
    path, where a rollback may still be under way."""
    session = sessions()
    try:
        yield session
        await session.commit()
    except BaseException:
        try:
            await session.rollback()
        finally:
            await session.__aexit__(None, None, None)
        raise
    await session.close()


@asynccontextmanager
async def session_scope(
    sessions: async_sessionmaker[AsyncSession],
) -> AsyncIterator[AsyncSession]:
    """`async with sessions() as session`, closed directly where closing does no I/O.

    SQLAlchemy closes a session at the end of `async with` in a task of its own, which a
    cancellation cannot interrupt: a task and two turns of the event loop for every request.
    Closing does no I/O, nothing a cancellation could cut short, when the session holds no
    transaction (committed) or on SQLite, whose rollback is a call on the loop thread
    (plumbing.sqlite_inloop): then it is closed directly. After an error, as SQLAlchemy does."""
    session = sessions()
    try:
        yield session
    except BaseException:
        await session.__aexit__(None, None, None)
        raise
    if not session.in_transaction() or session.get_bind().dialect.name == "sqlite":
        await session.close()
    else:
        await session.__aexit__(None, None, None)


# Constraint names the same on SQLite and PostgreSQL, so that migrations can name them.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


# Keys of the PostgreSQL advisory locks under which each schema migrates: replicas starting
# at the same moment on an empty database take turns instead of racing on alembic_version.
SERVICE_MIGRATION_LOCK = 0x74696D65_0001
BOT_MIGRATION_LOCK = 0x74696D65_0002


async def once_more_on_conflict(work: Callable[[], Awaitable[None]]) -> None:
    """Runs `work`, a unit of work that reads a row and inserts it when missing; when a
    concurrent one inserted it first (the key's IntegrityError), runs it once more: the row
    is found then and updated."""
    try:
        await work()
    except IntegrityError:
        await work()


async def upgrade_under_lock(engine: AsyncEngine, tree: SchemaTree, lock_key: int) -> None:
    """`alembic upgrade head` of `tree`, in one transaction; on PostgreSQL behind a
    transaction-scoped advisory lock (the second process waits, then finds nothing to do).
    Refuses, before any write, a database that a newer release migrated (SchemaNewerThanCode)."""
    from alembic import command
    from sqlalchemy import text

    def _upgrade(connection: Any) -> None:
        refuse_if_newer(connection, tree)
        tree.config.attributes["connection"] = connection
        command.upgrade(tree.config, "head")
        record_release(connection, tree)

    async with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            await connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": lock_key})
        await connection.run_sync(_upgrade)


async def schema_position(engine: AsyncEngine, tree: SchemaTree) -> Position:
    """Where the database's schema stands against `tree`'s migrations (current, behind, or
    ahead: a newer release migrated it)."""
    async with engine.connect() as connection:
        return await connection.run_sync(position, tree)


async def is_current(engine: AsyncEngine, tree: SchemaTree) -> bool:
    """Whether this code can serve the database: at its newest migration, or at a newer
    release's, which migrated it while this one runs (migrations expand first, so the release
    before still works on it; a process of it that starts again refuses)."""
    return await schema_position(engine, tree) != "behind"


async def check_connection(engine: AsyncEngine) -> None:
    from sqlalchemy import text

    async with engine.connect() as connection:
        await connection.execute(text("SELECT 1"))
