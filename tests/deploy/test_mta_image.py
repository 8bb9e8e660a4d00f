"""The compose MTA (deploy/mta/Dockerfile and its entrypoint) built and started with podman in
front of a live timebot: the entrypoint writes the names and the LMTP transport from the
environment, OpenDKIM and OpenDMARC run with the AuthservID given, an unknown recipient is
refused at RCPT with 550 (Postfix asked timebot), and a reply is delivered to timebot over LMTP
from the MTA's address with the milters' Authentication-Results, which timebot trusts. (The
signed-approve path through the same configuration files runs without containers in
tests/protocol/test_mta_postfix.py, where the milters can resolve the test key.)

Bases and podman options: see test_container_image.py. The container sits on podman's default
bridge network; timebot listens on the bridge's gateway address, the container's ports are
published on loopback."""

from __future__ import annotations

import asyncio
import email
import json
import socket
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from email.policy import default
from pathlib import Path

import aiosmtplib
import httpx
import pytest

from tests.deploy.test_container_image import PYTHON_BASE, _podman, _skip_reason
from tests.net import free_port
from tests.protocol.reply_helpers import DOMAIN, processed, reply, reply_token, submitted_sheet
from tests.support import LiveServer, Org, new_org, start_live_server, stop_live_server
from timebot.secret_key.tokens import reply_address

ROOT = Path(__file__).resolve().parents[2]
IMAGE = "localhost/timebot-mta:deploy-test"
HOSTNAME = "mx.timebot.test"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(_skip_reason() is not None,
                                                     reason=_skip_reason() or "")]


@dataclass
class World:
    live: LiveServer
    smtp_port: int
    container: str

    @property
    def runtime(self) -> object:
        return self.live.app.state.runtime


def _bridge() -> tuple[str, str]:
    """podman's default network: (subnet, gateway)."""
    (network,) = json.loads(_podman("network", "inspect", "podman").stdout)
    subnet = network["subnets"][0]
    return str(subnet["subnet"]), str(subnet["gateway"])


def _wait_port(port: int, container: str, wait_s: float = 90.0) -> None:
    deadline = time.monotonic() + wait_s
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
                if sock.recv(64).startswith(b"220"):
                    return
        except OSError:
            pass
        state = _podman("inspect", "-f", "{{.State.Status}}", container).stdout.strip()
        assert state == "running", _podman("logs", container, check=False).stdout[-4000:]
        assert time.monotonic() < deadline, _podman("logs", container, check=False).stdout
        time.sleep(0.5)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[World]:
    _podman("build", "--network", "host", "--build-arg", f"DEBIAN_IMAGE={PYTHON_BASE}",
            "-t", IMAGE, str(ROOT / "deploy" / "mta"), timeout=1800)
    subnet, gateway = _bridge()
    lmtp_port, smtp_port = free_port(), free_port()
    # The container first: the bridge's gateway address exists only while one runs.
    container = _podman(
        "run", "-d", "-p", f"127.0.0.1:{smtp_port}:25",
        "-e", f"MTA_HOSTNAME={HOSTNAME}", "-e", f"MAIL_DOMAIN={DOMAIN}",
        "-e", f"TIMEBOT_LMTP={gateway}:{lmtp_port}", "-e", f"RELAY_NETWORKS={gateway}/32",
        IMAGE).stdout.strip()
    try:
        _wait_port(smtp_port, container)
        live = await start_live_server(
            request.param, tmp_path_factory.mktemp(f"mta-image-{request.param}"), extra_env={
                "TIMEBOT_MAIL_DOMAIN": DOMAIN,
                "TIMEBOT_SMTP_HOST": gateway,
                "TIMEBOT_SMTP_PORT": "0",
                "TIMEBOT_LMTP_PORT": str(lmtp_port),
                "TIMEBOT_MAIL_TRUSTED_AUTHSERV_IDS": HOSTNAME,
                "TIMEBOT_MAIL_TRUSTED_NETWORKS": subnet,
            })
        try:
            yield World(live, smtp_port, container)
        finally:
            await stop_live_server(live)
    finally:
        _podman("rm", "-f", "-t", "5", container, check=False)


@pytest.fixture
async def org(world: World) -> AsyncIterator[Org]:
    async with httpx.AsyncClient(timeout=30) as http:
        yield await new_org(world.live, http)


def _client(world: World) -> aiosmtplib.SMTP:
    return aiosmtplib.SMTP(hostname="127.0.0.1", port=world.smtp_port, timeout=60,
                           start_tls=False, local_hostname="client.example.com")


async def test_an_unknown_recipient_is_refused_at_rcpt(world: World) -> None:
    async with _client(world) as client:
        await client.mail("someone@example.com")
        with pytest.raises(aiosmtplib.SMTPRecipientRefused) as refused:
            await client.rcpt(f"nobody@{DOMAIN}")
        assert refused.value.code == 550, refused.value


async def test_a_reply_reaches_timebot_over_lmtp_with_the_milters_headers(
    world: World, org: Org
) -> None:
    sheet, _ = await submitted_sheet(org)
    token = reply_token(world, sheet)  # type: ignore[arg-type]
    raw = reply(sheet.approver.email, token, "approve")
    async with _client(world) as client:
        errors, _ = await client.sendmail("someone@example.com",
                                          [reply_address(token, DOMAIN)], raw)
        assert not errors, errors
    row = await asyncio.wait_for(processed(world, raw, wait_s=60), 90)  # type: ignore[arg-type]
    assert row.source == "lmtp"
    assert row.headers_trusted is True
    parsed = email.message_from_bytes(row.raw, policy=default)
    results = [" ".join(str(value).split())
               for value in parsed.get_all("Authentication-Results", [])]
    # Unsigned (the container cannot look up a test key): OpenDKIM adds nothing, OpenDMARC
    # says none, under the AuthservID the entrypoint wrote; timebot refuses to decide on it.
    assert results == [f"{HOSTNAME}; dmarc=none (p=none dis=none) header.from=example.com"]
    assert "not verified" in (row.outcome or "") or "sender-not-verified" in (row.outcome or "")
