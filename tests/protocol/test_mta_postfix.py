"""deploy/mta/postfix.md, followed as written: a private Postfix with OpenDKIM and OpenDMARC
(Debian's packages, configured from deploy/mta/) in front of a live timebot that listens on
LMTP only and relays its mail out through that Postfix. A DKIM-signed approve goes in over
SMTP, the milters' Authentication-Results come out on timebot's side, the timesheet is
approved, and the receipt arrives through Postfix in a catch-all Maildir. The sender's domain
publishes no DMARC record (dmarc=none, aligned dkim=pass). Unknown recipients are refused at
RCPT time (recipient verification against timebot's RCPT check), not bounced later."""

from __future__ import annotations

import asyncio
import email
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from email.message import Message
from email.policy import default

import aiosmtplib
import httpx
import pytest
from sqlalchemy import select

from tests.net import free_port
from tests.protocol.mta import Mta, running_mta, skip_reason
from tests.protocol.reply_helpers import (
    DOMAIN,
    DkimKey,
    Sheet,
    reply,
    reply_token,
    submitted_sheet,
)
from tests.service.test_approvals_support import state
from tests.support import LiveServer, Org, new_org, start_live_server, stop_live_server
from timebot.secret_key.tokens import reply_address
from timebot.state.models import InboxMessage, OutboxMessage

HOSTNAME = "mx.timebot.test"  # the MTA's name and both milters' AuthservID
SENDERS = "example.com"  # the approvers' domain (tests.support): no DMARC record

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")]


@dataclass
class World:
    live: LiveServer
    mta: Mta
    key: DkimKey

    @property
    def settings(self) -> object:
        return self.live.settings


@pytest.fixture(scope="module")
def dkim_key() -> DkimKey:
    return DkimKey.generate(SENDERS)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
    dkim_key: DkimKey,
) -> AsyncIterator[World]:
    lmtp_port = free_port()
    with running_mta(domain=DOMAIN, hostname=HOSTNAME, lmtp_port=lmtp_port,
                     relayed_domain=SENDERS,
                     txt_records={f"s1._domainkey.{SENDERS}": dkim_key.txt}) as mta:
        live = await start_live_server(
            request.param, tmp_path_factory.mktemp(f"mta-{request.param}"), extra_env={
                # deploy/mta/postfix.md's "timebot side", with this machine's ports.
                "TIMEBOT_MAIL_DOMAIN": DOMAIN,
                "TIMEBOT_LMTP_PORT": str(lmtp_port),
                "TIMEBOT_SMTP_PORT": "0",
                "TIMEBOT_MAIL_TRUSTED_AUTHSERV_IDS": HOSTNAME,
                "TIMEBOT_MAIL_TRUSTED_NETWORKS": "127.0.0.1/32",
                "TIMEBOT_SMTP_RELAY": f"smtp://127.0.0.1:{mta.relay_port}",
            })
        try:
            yield World(live, mta, dkim_key)
        finally:
            await stop_live_server(live)


@pytest.fixture
async def org(world: World) -> AsyncIterator[Org]:
    async with httpx.AsyncClient(timeout=30) as http:
        yield await new_org(world.live, http)


async def send(mta: Mta, raw: bytes, rcpt: str) -> None:
    """An SMTP session from "the internet" to Postfix's port 25 stand-in."""
    client = aiosmtplib.SMTP(hostname="127.0.0.1", port=mta.smtp_port, timeout=60,
                             start_tls=False, local_hostname="client.example.com")
    async with client:
        errors, _ = await client.sendmail(f"someone@{SENDERS}", [rcpt], raw)
        assert not errors, errors


def message_id(raw: bytes) -> str:
    return str(email.message_from_bytes(raw, policy=default)["Message-ID"]).strip()


async def relayed_receipt(mta: Mta, raw: bytes, wait_s: float = 60.0) -> Message:
    """The receipt answering `raw`, as Postfix delivered it to the catch-all Maildir."""
    wanted = message_id(raw)
    deadline = asyncio.get_running_loop().time() + wait_s
    while True:
        if mta.catchall.is_dir():
            for path in sorted(mta.catchall.iterdir()):
                message = email.message_from_bytes(path.read_bytes(), policy=default)
                if str(message.get("In-Reply-To", "")).strip() == wanted:
                    return message
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"no receipt relayed through Postfix\n{mta.log()}")
        await asyncio.sleep(0.1)


async def inbox_row(world: World, raw: bytes) -> InboxMessage:
    wanted = message_id(raw).encode()
    rows = await world.live.app.state.mail.inbox.all()
    found = [row for row in rows if wanted in row.raw]
    assert len(found) == 1, f"{len(found)} inbox rows"
    return found[0]  # type: ignore[no-any-return]


def authentication_results(raw: bytes) -> list[str]:
    parsed = email.message_from_bytes(raw, policy=default)
    return [" ".join(str(value).split()) for value in parsed.get_all("Authentication-Results", [])]


async def status(org: Org, sheet: Sheet) -> str:
    return str((await state(org.admin, sheet.owner))["status"])  # type: ignore[arg-type]


def text_of(message: Message) -> str:
    body = message.get_body(("plain",))  # type: ignore[attr-defined]
    return str(body.get_content())


async def test_a_signed_approve_through_postfix_is_decided_and_the_receipt_relayed_back(
    world: World, org: Org
) -> None:
    sheet, _ = await submitted_sheet(org)
    token = reply_token(world, sheet)  # type: ignore[arg-type]
    signed = reply(sheet.approver.email, token, "Approved, thanks", sign_with=world.key)
    await send(world.mta, signed, reply_address(token, DOMAIN))
    receipt = await relayed_receipt(world.mta, signed)
    assert text_of(receipt).splitlines()[0] == "Approved", text_of(receipt)
    assert await status(org, sheet) == "a"
    # It went through Postfix on the way out (its Received line) to the approver.
    assert HOSTNAME in str(receipt["Received"])
    assert receipt["Delivered-To"] == sheet.approver.email
    # What timebot got over LMTP: each milter's own header, OpenDMARC's on top, trusted.
    row = await inbox_row(world, signed)
    assert row.headers_trusted is True
    results = authentication_results(row.raw)
    assert len(results) == 2, results
    assert results[0].startswith(HOSTNAME) and "dmarc=none" in results[0], results
    assert results[1].startswith(HOSTNAME) and "dkim=pass" in results[1], results
    assert f"header.d={SENDERS}" in results[1], results


async def test_an_unsigned_approve_through_postfix_changes_nothing(
    world: World, org: Org
) -> None:
    sheet, _ = await submitted_sheet(org)
    token = reply_token(world, sheet)  # type: ignore[arg-type]
    unsigned = reply(sheet.approver.email, token, "approve")
    await send(world.mta, unsigned, reply_address(token, DOMAIN))
    # Not authenticated: logged and dropped, no receipt (its From may be anyone's).
    for _ in range(600):
        rows = [row for row in await world.live.app.state.mail.inbox.all()
                if message_id(unsigned).encode() in row.raw and row.status == "done"]
        if rows:
            break
        await asyncio.sleep(0.1)
    else:
        raise AssertionError(f"not processed\n{world.mta.log()}")
    assert (rows[0].outcome or "").startswith("sender-not-verified; no receipt"), rows[0].outcome
    async with world.live.app.state.runtime.state_sessions() as session:
        receipts = await session.scalars(select(OutboxMessage).where(
            OutboxMessage.dedupe_key == f"receipt:{rows[0].message_key}"))
        assert list(receipts) == []
    assert await status(org, sheet) == "s"


async def test_an_unknown_recipient_is_refused_at_rcpt_with_550(world: World) -> None:
    client = aiosmtplib.SMTP(hostname="127.0.0.1", port=world.mta.smtp_port, timeout=60,
                             start_tls=False, local_hostname="client.example.com")
    async with client:
        await client.ehlo()
        await client.mail(f"someone@{SENDERS}")
        with pytest.raises(aiosmtplib.SMTPRecipientRefused) as refused:
            await client.rcpt(f"nobody@{DOMAIN}")
        assert refused.value.code == 550, refused.value
        # A forged token is refused the same way.
        with pytest.raises(aiosmtplib.SMTPRecipientRefused) as forged:
            await client.rcpt(f"approvals+forged@{DOMAIN}")
        assert forged.value.code == 550, forged.value


def _closed_port() -> int:
    port = free_port()
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", port)) != 0
    return port


async def test_while_timebot_is_down_recipients_are_deferred_not_accepted(
    dkim_key: DkimKey,
) -> None:
    """Postfix cannot ask timebot (its LMTP port is closed): RCPT gets a temporary 4xx, so the
    sender's server retries later; nothing is accepted that could bounce afterwards."""
    with running_mta(domain=DOMAIN, hostname=HOSTNAME, lmtp_port=_closed_port(),
                     relayed_domain=SENDERS,
                     txt_records={f"s1._domainkey.{SENDERS}": dkim_key.txt}) as mta:
        client = aiosmtplib.SMTP(hostname="127.0.0.1", port=mta.smtp_port, timeout=60,
                                 start_tls=False, local_hostname="client.example.com")
        async with client:
            await client.mail(f"someone@{SENDERS}")
            with pytest.raises(aiosmtplib.SMTPRecipientRefused) as refused:
                await client.rcpt(f"time@{DOMAIN}")
            assert 400 <= refused.value.code < 500, refused.value
