"""Requests the service makes to addresses an administrator chose reach public addresses
only (service/outbound.py): webhooks to loopback, to a name resolving to loopback, to an
IPv4-mapped loopback and to the cloud metadata address are not delivered and the delivery
records why; a custom OpenID issuer on loopback answers a clear refusal instead of being
fetched. With TIMEBOT_OUTBOUND_ALLOWED_NETWORKS (the suite's other servers allow loopback)
the same webhooks are delivered."""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from aiohttp import web
from sqlalchemy import select

from service.outbound import OutboundPolicy
from service.timesheets.models import IntegrationWebhook, WebhookDelivery
from tests.conftest import BACKENDS
from tests.net import free_port
from tests.service.test_approvals_support import add_record, submit
from tests.support import (
    TEST_SECRET_KEY,
    LiveServer,
    Org,
    new_org,
    start_live_server,
    stop_live_server,
)
from tests.timebot.signin_support import browser
from timebot.config import load_settings
from timebot.errors import ConfigError

ADD = ("mutation($n: String!, $u: String!) { addIntegrationWebhook(name: $n, url: $u, "
       "events: [\"*\"]) { id } }")
EDIT_SSO = "mutation($c: SvcCustomSSOInput) { editCustomSSO(customSSO: $c) { id } }"


@pytest.fixture(scope="module", params=BACKENDS)
async def strict(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                 ) -> AsyncIterator[LiveServer]:
    """A server as deployed by default: no network allowed beyond the public ones."""
    server = await start_live_server(
        request.param, Path(tmp_path_factory.mktemp(f"strict-{request.param}")),
        {"TIMEBOT_OUTBOUND_ALLOWED_NETWORKS": ""},
    )
    try:
        yield server
    finally:
        await stop_live_server(server)


class Listener:
    """A loopback HTTP server that counts every request it gets (and answers a discovery
    document naming itself, should anyone ask)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.requests: list[str] = []
        self.runner: web.AppRunner | None = None

    async def handle(self, request: web.Request) -> web.Response:
        self.requests.append(request.path)
        base = f"http://127.0.0.1:{self.port}"
        return web.json_response({
            "issuer": base, "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token", "jwks_uri": f"{base}/jwks",
        })

    async def __aenter__(self) -> Listener:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.handle)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", self.port).start()
        return self

    async def __aexit__(self, *_exc: object) -> None:
        assert self.runner is not None
        await self.runner.cleanup()


async def register_and_submit(org: Org, urls: list[str]) -> None:
    for number, url in enumerate(urls):
        await org.admin.gql(ADD, {"n": f"hook {number}", "u": url})
    bob = await org.add_member("Bob")
    await add_record(bob, bob)
    await submit(bob, bob)


async def errors_of(org: Org, count: int) -> dict[str, str]:
    """url -> the last error of its delivery, once `count` deliveries were attempted."""
    found: dict[str, str] = {}
    for _ in range(400):
        org.live.service.webhooks.kick()
        async with org.live.service.sessions() as session:
            rows = (await session.execute(
                select(IntegrationWebhook.url, WebhookDelivery.last_error)
                .join(WebhookDelivery, WebhookDelivery.webhook_id == IntegrationWebhook.id)
                .where(IntegrationWebhook.organisation_id == org.id,
                       WebhookDelivery.attempts > 0)
            )).all()
        found = {str(url): str(error) for url, error in rows}
        if len(found) >= count:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"{count} attempts expected, got {found}")


async def test_webhooks_to_non_public_addresses_are_refused(
    strict: LiveServer, http: httpx.AsyncClient
) -> None:
    org = await new_org(strict, http)
    async with Listener() as listener:
        urls = [f"http://127.0.0.1:{listener.port}/hook",
                f"http://localhost:{listener.port}/hook",  # a name resolving to loopback
                f"http://[::ffff:127.0.0.1]:{listener.port}/hook",
                "http://169.254.169.254/latest/meta-data/"]
        await register_and_submit(org, urls)
        errors = await errors_of(org, len(urls))
        assert listener.requests == [], "nothing reached the loopback listener"
    for url in urls:
        assert "not a public address" in errors[url], errors[url]
        assert "TIMEBOT_OUTBOUND_ALLOWED_NETWORKS" in errors[url]
    assert "(loopback)" in errors[urls[0]] and "(loopback)" in errors[urls[1]]
    assert "stands for 127.0.0.1" in errors[urls[2]]
    assert "(link-local)" in errors[urls[3]]


async def test_webhooks_to_an_allowed_network_are_delivered(org: Org) -> None:
    assert org.live.settings.outbound_allowed_networks  # the suite's servers allow loopback
    async with Listener() as listener:
        urls = [f"http://127.0.0.1:{listener.port}/hook",
                f"http://localhost:{listener.port}/hook"]
        await register_and_submit(org, urls)
        errors = await errors_of(org, len(urls))
        assert set(errors.values()) == {"None"}
        assert listener.requests == ["/hook", "/hook"]


async def test_a_custom_openid_issuer_on_loopback_is_not_fetched(
    strict: LiveServer, http: httpx.AsyncClient
) -> None:
    org = await new_org(strict, http)
    async with Listener() as listener:
        for issuer in (f"http://127.0.0.1:{listener.port}", f"http://localhost:{listener.port}"):
            await org.admin.gql(EDIT_SSO, {"c": {"issuer": issuer, "clientId": "timebot",
                                                 "clientSecret": "s3cret"}})
            async with browser(strict) as client:  # anonymous, as anyone may
                answer = await client.get(f"/sso/{org.id}/custom/initiate")
            assert answer.status_code == 404, answer.text
            assert "location" not in answer.headers
            assert "not reachable from here" in answer.text
            assert "not a public address (loopback)" in answer.text
        assert listener.requests == []


def test_what_is_public() -> None:
    policy = OutboundPolicy()
    refused = ["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254",
               "100.64.0.1", "0.0.0.0", "224.0.0.1", "239.1.1.1", "255.255.255.255",
               "192.0.2.1", "198.18.0.1", "::1", "::", "fe80::1", "fc00::1", "ff02::1",
               "::ffff:127.0.0.1", "::ffff:10.0.0.1", "2002:7f00:1::1", "64:ff9b::a9fe:a9fe",
               "::7f00:1", "2001:db8::1"]
    for text in refused:
        assert policy.refusal(ipaddress.ip_address(text)) is not None, text
    for text in ("8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"):
        assert policy.refusal(ipaddress.ip_address(text)) is None, text
    allowing = OutboundPolicy((ipaddress.ip_network("127.0.0.0/8"),
                               ipaddress.ip_network("10.0.0.0/8")))
    for text in ("127.0.0.1", "::ffff:127.0.0.1", "10.9.9.9"):
        assert allowing.refusal(ipaddress.ip_address(text)) is None, text
    for text in ("::1", "169.254.169.254", "192.168.1.1"):
        assert allowing.refusal(ipaddress.ip_address(text)) is not None, text


def test_the_allow_list_is_read_and_a_bad_item_named(tmp_path: Path) -> None:
    base = {"TIMEBOT_DATA_DIR": str(tmp_path), "TIMEBOT_SECRET_KEY": TEST_SECRET_KEY}
    assert load_settings(base).outbound_allowed_networks == ()
    settings = load_settings({**base, "TIMEBOT_OUTBOUND_ALLOWED_NETWORKS": "10.0.0.0/8, ::1"})
    assert settings.outbound_allowed_networks == (ipaddress.ip_network("10.0.0.0/8"),
                                                  ipaddress.ip_network("::1"))
    with pytest.raises(ConfigError, match="TIMEBOT_OUTBOUND_ALLOWED_NETWORKS: 'intranet'"):
        load_settings({**base, "TIMEBOT_OUTBOUND_ALLOWED_NETWORKS": "10.0.0.0/8,intranet"})
