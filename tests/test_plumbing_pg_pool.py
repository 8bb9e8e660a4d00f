"""PostgreSQL connections from the pool (plumbing.pg_pool, issue #18): a unit of work costs no
round trip at checkout, and a connection the server closed while it was pooled (a restart, a
terminated backend) or one idle too long is replaced before the unit of work uses it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
from sqlalchemy import event, make_url, text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from plumbing.db import create_engine, session_factory, unit_of_work
from plumbing.pg_pool import replace_dead_connections_on_checkout
from tests.pg import PG_ADMIN_DSN, create_pg_database, drop_pg_database, pg_url


class RoundTrips:
    """A TCP proxy in front of PostgreSQL counting round trips: each time a client sends
    after the server last spoke (a request whose answer it waits for)."""

    def __init__(self) -> None:
        admin = make_url(PG_ADMIN_DSN)
        self.upstream = (admin.host or "127.0.0.1", admin.port or 5432)
        self.count = 0
        self.server: asyncio.Server | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()

    async def _serve(self, client: asyncio.StreamReader, to_client: asyncio.StreamWriter) -> None:
        server, to_server = await asyncio.open_connection(*self.upstream)
        client_spoke_last = False

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter,
                       from_client: bool) -> None:
            nonlocal client_spoke_last
            try:
                while data := await source.read(65536):
                    if from_client and not client_spoke_last:
                        self.count += 1
                    client_spoke_last = from_client
                    sink.write(data)
                    await sink.drain()
            except ConnectionError:
                pass
            finally:
                sink.close()

        await asyncio.gather(pipe(client, to_server, True), pipe(server, to_client, False))


@pytest.fixture
async def database() -> AsyncIterator[str]:
    name = await create_pg_database()
    try:
        yield name
    finally:
        await drop_pg_database(name)


async def _backend_pid(engine: AsyncEngine) -> int:
    async with unit_of_work(session_factory(engine)) as session:
        return int(await session.scalar(text("SELECT pg_backend_pid()")))


async def test_a_unit_of_work_costs_no_round_trip_at_checkout(database: str) -> None:
    proxy = RoundTrips()
    port = await proxy.start()
    admin = make_url(PG_ADMIN_DSN)
    engine = create_engine(str(admin.set(drivername="postgresql+asyncpg", host="127.0.0.1",
                                         port=port, database=database)))
    try:
        await _backend_pid(engine)  # connects, and prepares the statement
        before = proxy.count
        await _backend_pid(engine)
        # BEGIN, the prepared statement, COMMIT: nothing at checkout (pre-ping was 3 more).
        assert proxy.count - before == 3
    finally:
        await engine.dispose()
        await proxy.stop()


async def test_connections_the_server_closed_are_replaced_before_use(database: str) -> None:
    engine = create_engine(pg_url(database))
    pooled: list[Any] = []
    event.listen(engine.sync_engine, "checkin",
                 lambda dbapi_connection, _record: pooled.append(dbapi_connection))
    try:
        # Three connections in the pool, as after a burst; then the server drops them all, as
        # a restart does.
        pids = set(await asyncio.gather(*(_slow_backend_pid(engine) for _ in range(3))))
        assert len(pids) == 3
        admin = await asyncpg.connect(PG_ADMIN_DSN)
        try:
            await admin.execute("SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) pid",
                                list(pids))
        finally:
            await admin.close()
        for _ in range(100):  # the server's close reaches the idle connections
            if all(connection.driver_connection.is_closed() for connection in pooled):
                break
            await asyncio.sleep(0.05)
        else:
            pytest.fail("the pooled connections were not closed by the server")
        # Every unit of work after it succeeds, each on a new connection.
        after = set(await asyncio.gather(*(_slow_backend_pid(engine) for _ in range(3))))
        assert len(after) == 3 and not after & pids
    finally:
        await engine.dispose()


async def _slow_backend_pid(engine: AsyncEngine) -> int:
    async with unit_of_work(session_factory(engine)) as session:
        pid = int(await session.scalar(text("SELECT pg_backend_pid()")))
        await asyncio.sleep(0.05)  # the others check out their own connection meanwhile
        return pid


async def test_a_connection_idle_too_long_is_replaced(database: str) -> None:
    engine = create_async_engine(pg_url(database), pool_size=1, max_overflow=0)
    replace_dead_connections_on_checkout(engine, idle_limit_s=0.5)
    try:
        first = await _backend_pid(engine)
        assert await _backend_pid(engine) == first  # reused while it is recent
        await asyncio.sleep(0.7)
        assert await _backend_pid(engine) != first
    finally:
        await engine.dispose()
