"""Fixtures: a live server per database backend (SQLite and PostgreSQL), an HTTP client, and a
fresh organisation per test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from tests.pg import dropped_all
from tests.slow_first import ordered
from tests.support import LiveServer, Org, new_org, start_live_server, stop_live_server

BACKENDS = ["sqlite", "postgresql"]


def pytest_configure(config: pytest.Config) -> None:
    # `--dist loadfile` hands out whole files in the order of the collection below: xdist's own
    # reordering (most tests first) would leave the few-test files that take minutes (an image
    # build, `timebot serve --workers 2`) for the end, where one of them is the whole tail.
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_sessionfinish(session: pytest.Session) -> None:
    dropped_all()  # the stopped servers' databases (tests.pg.drop_pg_database_soon)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest files first (tests/slow_first.py); a file's tests keep their order."""
    items[:] = ordered(items)


@pytest.fixture(scope="session")
async def live_servers(
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[dict[str, LiveServer]]:
    """This worker's live servers, one per backend, kept until the session ends: `live`
    starts each when first asked for it."""
    servers: dict[str, LiveServer] = {}
    try:
        yield servers
    finally:
        for server in servers.values():
            await stop_live_server(server)


@pytest.fixture(scope="session", params=BACKENDS)
async def live(
    request: pytest.FixtureRequest, live_servers: dict[str, LiveServer],
    tmp_path_factory: pytest.TempPathFactory,
) -> LiveServer:
    """The backend's live server, shared by every test of this worker (each test makes its own
    organisation). Under `--dist loadfile` each file runs its SQLite tests then its PostgreSQL
    ones, so the parameter changes twice a file: `live_servers` keeps both servers running
    instead of stopping one and starting the other each time."""
    backend: str = request.param
    if backend not in live_servers:
        live_servers[backend] = await start_live_server(
            backend, tmp_path_factory.mktemp(f"live-{backend}"))
    return live_servers[backend]


@pytest.fixture(scope="session")
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=30) as client:
        yield client


@pytest.fixture
async def org(live: LiveServer, http: httpx.AsyncClient) -> AsyncIterator[Org]:
    organisation = await new_org(live, http)
    frozen, offset = live.clock.frozen_ms, live.clock.offset_ms
    try:
        yield organisation
    finally:
        live.clock.frozen_ms, live.clock.offset_ms = frozen, offset
