"""Fixtures: a live server per database backend (SQLite and PostgreSQL), an HTTP client, and a
fresh organisation per test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from tests.support import LiveServer, Org, new_org, start_live_server, stop_live_server

BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(scope="session", params=BACKENDS)
async def live(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[LiveServer]:
    backend: str = request.param
    server = await start_live_server(backend, tmp_path_factory.mktemp(f"live-{backend}"))
    try:
        yield server
    finally:
        await stop_live_server(server)


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
