"""What every HTTP response says about itself: no framing by another site (CSP frame-ancestors
and X-Frame-Options), no content sniffing, and (from `timebot serve`, one worker or several)
no `server` header naming the software. And GET /graphql-ide/* before the IDE is built: 404
with the hint, not a 500."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from service.graphql import http as graphql_http
from shell.response_headers import secured
from tests.net import free_port
from tests.support import LiveServer, Org, start_live_server, stop_live_server
from tests.timebot.serve_process import serve_env, serving

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow


def assert_secured(response: httpx.Response) -> None:
    where = f"{response.request.method} {response.request.url.path} -> {response.status_code}"
    assert response.headers.get_list("x-content-type-options") == ["nosniff"], where
    assert response.headers.get_list("x-frame-options") == ["DENY"], where
    [policy] = response.headers.get_list("content-security-policy")
    assert "frame-ancestors 'none'" in policy, where


async def test_every_response_forbids_framing_and_sniffing(org: Org) -> None:
    live = org.live
    async with httpx.AsyncClient(base_url=live.base_url, timeout=30) as client:
        responses = [
            await client.get("/signin"),
            await client.get("/account"),  # a redirect to /signin
            await client.get("/a/notatoken"),  # the one-click pages' error page
            await client.get("/r/notatoken"),
            await client.post("/a/notatoken", data={}),
            await client.get("/outbox"),
            await client.get("/outbox/nope"),
            await client.get("/sso/google/initiate"),
            await client.get(f"/sso/{org.id}/custom/initiate"),
            await client.get("/no/such/page"),  # the router's 404
            await client.put("/healthz"),  # 405
            await client.get("/graphql"),
            await client.post("/graphql", json={"query": "{ currentPerson { id } }"}),
            await client.post("/graphql", content=b"{not json"),
            await client.get("/healthz"),
            await client.get("/metrics"),
        ]
    assert {response.status_code for response in responses} >= {200, 303, 404, 405}
    for response in responses:
        assert_secured(response)


def test_a_policy_a_response_has_keeps_its_directives() -> None:
    headers = [(b"content-type", b"text/html"),
               (b"Content-Security-Policy", b"default-src 'self'; frame-ancestors *"),
               (b"x-frame-options", b"SAMEORIGIN")]
    assert secured(headers) == [
        (b"content-type", b"text/html"),
        (b"Content-Security-Policy", b"default-src 'self'; frame-ancestors 'none'"),
        (b"x-content-type-options", b"nosniff"),
        (b"x-frame-options", b"DENY"),
    ]


async def test_ide_assets_before_the_build_are_404_with_the_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The app started where service/static/graphiql does not exist (a checkout before
    `make ide`)."""
    monkeypatch.setattr(graphql_http, "IDE_DIR", tmp_path / "static" / "graphiql")
    live: LiveServer = await start_live_server("sqlite", tmp_path / "data")
    try:
        async with httpx.AsyncClient(base_url=live.base_url, timeout=30) as client:
            for path in ("/graphql-ide/graphiql.js", "/graphql-ide/", "/graphql-ide/x/y.css"):
                response = await client.get(path)
                assert response.status_code == 404, (path, response.text)
                assert "make ide" in response.text
                assert_secured(response)
            page = await client.get("/graphql")
            assert page.status_code == 200 and "make ide" in page.text
    finally:
        await stop_live_server(live)


@pytest.mark.parametrize("workers", ["1", "2"])
async def test_timebot_serve_names_no_software_and_keeps_the_outbox_local(
    tmp_path: Path, workers: str
) -> None:
    """`timebot serve` as operators run it (uvicorn's defaults: the loopback proxy's
    X-Forwarded-For names the client). No relay: the outbox is there, for this machine."""
    env = serve_env(tmp_path / "data", TIMEBOT_HTTP_PORT=str(free_port()),
                    TIMEBOT_SMTP_PORT="0")
    async with serving(env, "--workers", workers, cwd=tmp_path) as served:
        async with httpx.AsyncClient(base_url=served.base, timeout=30) as client:
            for path in ("/healthz", "/signin", "/outbox", "/no/such/page"):
                for _ in range(4):  # with two workers, each answers some
                    response = await client.get(path)
                    assert "server" not in response.headers, (path, response.headers)
                    assert_secured(response)
            assert (await client.get("/outbox")).status_code == 200
            proxied = await client.get("/outbox", headers={"x-forwarded-for": "203.0.113.7"})
            assert proxied.status_code == 404
