"""The GraphQL client over real loopback HTTP: what it makes of an answer, of a server that is
not there or not GraphQL, and of being used from one event loop after another (the CLI)."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from timebot.client import ServiceClient
from timebot.errors import PermissionRefused, ServiceRequestError, ServiceUnavailable


async def _answer(request: web.Request) -> web.Response:
    body = await request.json()
    key = request.headers.get("apikey")
    if request.path == "/broken":
        return web.Response(status=502, text="<html>bad gateway</html>")
    if key == "refused":
        return web.json_response({"data": {"me": None}, "permissionsErrors": ["me"]})
    if key == "wrong":
        return web.json_response({"data": None, "errors": [{"message": "no such thing: x"}]})
    return web.json_response({"data": {"echo": body.get("variables"), "key": key,
                                       "query": body["query"]}})


@pytest.fixture
async def server() -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_post("/graphql", _answer)
    app.router.add_post("/broken", _answer)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield f"http://127.0.0.1:{port}"
    await runner.cleanup()


async def test_sends_the_key_and_variables_and_returns_data(server: str) -> None:
    client = ServiceClient(f"{server}/graphql")
    try:
        data = await client.execute("query Q($n: Int) { echo(n: $n) }", {"n": 3}, apikey="k1")
    finally:
        await client.close()
    assert data["echo"] == {"n": 3}
    assert data["key"] == "k1"
    assert "echo(n: $n)" in data["query"]


async def test_errors_and_refusals_become_exceptions(server: str) -> None:
    client = ServiceClient(f"{server}/graphql")
    try:
        with pytest.raises(ServiceRequestError, match="no such thing"):
            await client.execute("{ x }", apikey="wrong")
        with pytest.raises(PermissionRefused):
            await client.execute("{ me }", apikey="refused")
        assert await client.execute("{ me }", apikey="refused", allow_partial=True) == {"me": None}
    finally:
        await client.close()


async def test_a_server_that_is_not_graphql_is_unavailable(server: str) -> None:
    client = ServiceClient(f"{server}/broken")
    try:
        with pytest.raises(ServiceUnavailable, match="502"):
            await client.execute("{ x }", apikey="k")
    finally:
        await client.close()


async def test_nothing_listening_is_unavailable() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = ServiceClient(f"http://127.0.0.1:{port}/graphql", timeout=5)
    try:
        with pytest.raises(ServiceUnavailable, match="cannot reach"):
            await client.execute("{ x }", apikey="k")
    finally:
        await client.close()


def test_one_client_serves_one_event_loop_after_another() -> None:
    """The CLI runs a loop per command: the connections of a closed loop are not reused."""
    answers: list[str] = []

    async def serve_and_ask(client: ServiceClient | None) -> ServiceClient:
        app = web.Application()
        app.router.add_post("/graphql", _answer)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", port)
        await site.start()
        try:
            client = client or ServiceClient(f"http://127.0.0.1:{port}/graphql")
            data = await client.execute("{ x }", apikey=f"loop{len(answers)}")
            answers.append(json.dumps(data["key"]))
            await client.close()
            return client
        finally:
            await runner.cleanup()

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = asyncio.run(serve_and_ask(None))
    asyncio.run(serve_and_ask(client))
    assert answers == ['"loop0"', '"loop1"']
