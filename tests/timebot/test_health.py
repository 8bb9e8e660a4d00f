"""Liveness and readiness over HTTP, and replicas that start at the same moment on one empty
PostgreSQL (the migration runs under a lock: both come up)."""

from __future__ import annotations

import asyncio
import secrets
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import httpx
import pytest
from sqlalchemy import text

from tests.net import free_port
from tests.pg import PG_ADMIN_DSN, create_pg_database, drop_pg_database, pg_url
from tests.support import LiveServer, start_live_server, stop_live_server
from tests.timebot.test_cli import TIMEBOT, cli_env


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=30) as client:
        yield client


async def test_liveness_and_readiness(live: LiveServer, http: httpx.AsyncClient) -> None:
    health = await http.get(f"{live.base_url}/healthz")
    assert health.status_code == 200 and health.json()["status"] == "ok"
    ready = await http.get(f"{live.base_url}/readyz")
    assert ready.status_code == 200, ready.text
    assert ready.json()["checks"] == {"bot_database": "ok", "service_database": "ok"}


async def test_stale_migrations_make_it_unready_not_dead(
    tmp_path: Path, http: httpx.AsyncClient
) -> None:
    live = await start_live_server("sqlite", tmp_path)
    try:
        async with live.app.state.runtime.state_engine.begin() as connection:
            await connection.execute(
                text("DELETE FROM timebot_alembic_version")  # not yet migrated
            )
        ready = await http.get(f"{live.base_url}/readyz")
        assert ready.status_code == 503
        assert ready.json()["checks"]["bot_database"] == "error: migrations are not current"
        assert ready.json()["checks"]["service_database"] == "ok"
        assert (await http.get(f"{live.base_url}/healthz")).status_code == 200
    finally:
        await stop_live_server(live)


async def test_a_database_outage_makes_it_unready_not_dead(
    tmp_path: Path, http: httpx.AsyncClient
) -> None:
    live = await start_live_server("postgresql", tmp_path)
    try:
        assert (await http.get(f"{live.base_url}/readyz")).status_code == 200
        service_db = live.databases[0]
        admin = await asyncpg.connect(PG_ADMIN_DSN)
        try:  # the database refuses new connections and drops the ones it had
            await admin.execute(f'ALTER DATABASE "{service_db}" ALLOW_CONNECTIONS false')
            await admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1",
                service_db,
            )
            ready = await http.get(f"{live.base_url}/readyz")
            assert ready.status_code == 503, ready.text
            assert ready.json()["checks"]["service_database"].startswith("error:")
            assert ready.json()["checks"]["bot_database"] == "ok"
            assert (await http.get(f"{live.base_url}/healthz")).status_code == 200
        finally:
            await admin.execute(f'ALTER DATABASE "{service_db}" ALLOW_CONNECTIONS true')
            await admin.close()
        for _ in range(100):
            if (await http.get(f"{live.base_url}/readyz")).status_code == 200:
                break
            await asyncio.sleep(0.1)
        else:
            pytest.fail("not ready again after the database came back")
    finally:
        await stop_live_server(live)


async def test_two_replicas_start_at_once_on_an_empty_postgresql(
    tmp_path: Path, http: httpx.AsyncClient
) -> None:
    databases = [await create_pg_database(), await create_pg_database()]
    processes: list[asyncio.subprocess.Process] = []
    ports = [free_port(), free_port()]
    shared_key = secrets.token_urlsafe(48)  # the replicas sign links alike
    try:
        for index, port in enumerate(ports):
            env = cli_env(
                tmp_path / f"replica{index}",
                TIMEBOT_HTTP_PORT=str(port),
                TIMEBOT_HTTP_HOST="127.0.0.1",
                TIMEBOT_SERVICE_DATABASE_URL=pg_url(databases[0]),
                TIMEBOT_DATABASE_URL=pg_url(databases[1]),
                TIMEBOT_SECRET_KEY=shared_key,
            )
            processes.append(
                await asyncio.create_subprocess_exec(
                    str(TIMEBOT), "serve", env=env, cwd=str(tmp_path),
                    stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
                )
            )
        for process, port in zip(processes, ports, strict=True):
            for _ in range(600):
                if process.returncode is not None:
                    assert process.stderr is not None
                    pytest.fail("a replica died: " + (await process.stderr.read()).decode())
                try:
                    ready = await http.get(f"http://127.0.0.1:{port}/readyz", timeout=2)
                    if ready.status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.1)
            else:
                pytest.fail("a replica did not become ready in 60 s")
    finally:
        for process in processes:
            if process.returncode is None:
                process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                await asyncio.wait_for(process.wait(), timeout=30)
            except TimeoutError:
                process.kill()
                await process.wait()
        for name in databases:
            await drop_pg_database(name)
