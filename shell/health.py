"""Liveness and readiness, as an orchestrator reads them.

`/healthz` (liveness) answers from the event loop alone: a database outage must not get every
replica restarted. `/readyz` (readiness) checks what serving needs: each database answers and
its schema is at the newest migration; while it says 503 the replica gets no traffic.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from plumbing.db import check_connection
from service.embedded import EmbeddedService
from timebot.process.runtime import Runtime
from timebot.state.db import schema_current

CHECK_SECONDS = 5.0


def liveness(build: dict[str, str]) -> Callable[[Request], Awaitable[Response]]:
    """`/healthz`: ok, with the release and schema revisions this process runs."""
    body = {"status": "ok", **build}

    async def healthz(_request: Request) -> Response:
        return JSONResponse(body)

    return healthz


async def _database(engine: AsyncEngine, current: Callable[[AsyncEngine], Awaitable[bool]]) -> str:
    try:
        async with asyncio.timeout(CHECK_SECONDS):
            await check_connection(engine)
            if not await current(engine):
                return "error: migrations are not current"
    except TimeoutError:
        return f"error: no answer within {CHECK_SECONDS:g} s"
    except Exception as error:  # reported in the body: an outage is an answer, not a crash
        return f"error: {type(error).__name__}: {error}"[:300]
    return "ok"


def readiness(
    runtime: Runtime, service: EmbeddedService | None
) -> Callable[[Request], Awaitable[Response]]:
    async def readyz(_request: Request) -> Response:
        from service.db import service_schema_current

        checks = {"bot_database": await _database(runtime.state_engine, schema_current)}
        if service is not None:
            checks["service_database"] = await _database(
                service.engine, service_schema_current
            )
        ready = all(value == "ok" for value in checks.values())
        return JSONResponse(
            {"status": "ok" if ready else "error", "checks": checks},
            status_code=200 if ready else 503,
        )

    return readyz
