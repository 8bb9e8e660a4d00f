"""Busy is 503, never 500 (shell.busy): a GraphQL request that cannot get a database
connection within its pool's timeout — every connection of the service's pools held, as under
a Monday morning's load — is answered 503 with Retry-After and a GraphQL error over HTTP; the
fronts' client takes that answer (over HTTP, or from the embedded service in-process) for the
service unavailable, the temporary failure its queues try again; once a connection is free the
same request is answered."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support import LiveServer, new_org, start_live_server, stop_live_server
from timebot.client import ServiceClient
from timebot.errors import ServiceUnavailable
from timebot.state.retry import is_temporary

ME = "query Me($id: SvcId!) { getPerson(id: $id) { id } }"
POOL_TIMEOUT_S = 0.3


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def live(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
               ) -> AsyncIterator[LiveServer]:
    server = await start_live_server(request.param, tmp_path_factory.mktemp("busy"))
    try:
        yield server
    finally:
        await stop_live_server(server)


def _tiny_pool(engine: AsyncEngine) -> None:
    """The engine's pool replaced by one of a single connection and a short wait for it (its
    events kept: SQLite's pragmas on connect)."""
    old = engine.sync_engine.pool
    engine.sync_engine.pool = type(old)(  # type: ignore[call-arg]
        old._creator, pool_size=1, max_overflow=0, timeout=POOL_TIMEOUT_S,
        _dispatch=old.dispatch, dialect=old._dialect,
    )


async def _service_engines(live: LiveServer) -> list[AsyncEngine]:
    service = live.service
    engines = [service.engine]
    if service.read_engine is not None and service.read_engine is not service.engine:
        engines.append(service.read_engine)
    return engines


async def test_a_request_that_finds_no_connection_is_503_with_retry_after(
    live: LiveServer,
) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        org = await new_org(live, http)
        key = org.admin.apikey
        me = {"query": ME, "variables": {"id": org.admin.id}}
        engines = await _service_engines(live)
        for engine in engines:
            _tiny_pool(engine)
        async with AsyncExitStack() as held:
            for engine in engines:  # every connection taken
                await held.enter_async_context(engine.connect())
            answer = await http.post(live.graphql_url, json=me, headers={"apikey": key})
            assert answer.status_code == 503, answer.text
            assert int(answer.headers["retry-after"]) > 0
            assert answer.json()["errors"][0]["message"].startswith("The server is busy")

            over_http = ServiceClient(live.graphql_url)
            try:
                with pytest.raises(ServiceUnavailable) as raised:
                    await over_http.execute(ME, {"id": org.admin.id}, apikey=key)
            finally:
                await over_http.close()
            assert "503" in str(raised.value) and is_temporary(raised.value)
            with pytest.raises(ServiceUnavailable) as raised:  # the embedded service, no HTTP
                await live.app.state.runtime.client.execute(ME, {"id": org.admin.id},
                                                            apikey=key)
            assert "503" in str(raised.value)
        answer = await http.post(live.graphql_url, json=me, headers={"apikey": key})
        assert answer.status_code == 200
        assert answer.json()["data"]["getPerson"]["id"] == org.admin.id
