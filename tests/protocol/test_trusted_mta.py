"""Authentication-Results count only on mail from our MTA (TIMEBOT_MAIL_TRUSTED_NETWORKS), and
then every header its milters added counts: real SMTP and LMTP sessions to a live timebot whose
trusted network is 127.0.0.1/32 — a client bound to 127.0.0.2 is "the internet", one bound to
127.0.0.1 is the MTA. The timesheet's state is read back over GraphQL, the receipt from the
Maildir outbox."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiosmtplib
import httpx
import pytest

from mail.queues.inbox import message_key
from tests.net import free_port
from tests.protocol.reply_helpers import (
    AUTHSERV,
    DOMAIN,
    DkimKey,
    MailWorld,
    no_receipt,
    processed,
    receipt_for,
    reply,
    reply_token,
    submitted_sheet,
)
from tests.service.test_approvals_support import state
from tests.support import Org, new_org, start_live_server, stop_live_server
from timebot.secret_key.tokens import reply_address

MTA = "127.0.0.1"  # the trusted network is 127.0.0.1/32
OUTSIDE = "127.0.0.2"  # loopback too, but outside it
OUR_RECEIVED = f"Received: from mail.example.com (mail.example.com [192.0.2.5]) by {AUTHSERV}"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[MailWorld]:
    root = tmp_path_factory.mktemp(f"trusted-mta-{request.param}")
    keys = {"example.com": DkimKey.generate("example.com")}
    txt = root / "dkim.txt"
    txt.write_text("".join(f"{key.line()}\n" for key in keys.values()))
    smtp_port, lmtp_port = free_port(), free_port()
    live = await start_live_server(request.param, root / "data", extra_env={
        "TIMEBOT_SMTP_PORT": str(smtp_port),
        "TIMEBOT_LMTP_PORT": str(lmtp_port),
        "TIMEBOT_MAIL_DOMAIN": DOMAIN,
        "TIMEBOT_MAIL_TRUSTED_AUTHSERV_IDS": AUTHSERV,
        "TIMEBOT_MAIL_TRUSTED_NETWORKS": f"{MTA}/32",
        "TIMEBOT_DKIM_TXT_FILE": str(txt),
    })
    try:
        yield MailWorld(live, None, smtp_port, lmtp_port, keys)  # type: ignore[arg-type]
    finally:
        await stop_live_server(live)


@pytest.fixture
async def org(world: MailWorld) -> AsyncIterator[Org]:
    async with httpx.AsyncClient(timeout=30) as http:
        yield await new_org(world.live, http)


async def send_from(world: MailWorld, peer: str, raw: bytes, rcpt: str, *,
                    lmtp: bool = False) -> None:
    """One SMTP (or LMTP: LHLO) session from the address `peer`."""
    client = aiosmtplib.SMTP(
        hostname="127.0.0.1", port=world.lmtp_port if lmtp else world.smtp_port,
        source_address=(peer, 0), timeout=20, start_tls=False,
    )
    await client.connect()
    try:
        if lmtp:
            response = await client.execute_command(b"LHLO", b"mx.timebot.test")
            assert response.code == 250, response.message
            client.last_ehlo_response = response  # LHLO stands for EHLO (one recipient: one
            # DATA reply, as the client expects)
        errors, _ = await client.sendmail("sender@example.com", [rcpt], raw)
        assert not errors, errors
    finally:
        client.close()


async def status(org: Org, owner: object) -> str:
    return str((await state(org.admin, owner))["status"])  # type: ignore[arg-type]


async def headers_trusted(world: MailWorld, raw: bytes) -> bool:
    await processed(world, raw)
    row = await world.mail.inbox.all()
    return next(r.headers_trusted for r in row if r.message_key == message_key(raw))


@pytest.mark.parametrize("lmtp", [False, True], ids=["smtp", "lmtp"])
async def test_a_forged_pass_sent_from_outside_decides_nothing(
    world: MailWorld, org: Org, lmtp: bool
) -> None:
    sheet, _ = await submitted_sheet(org)
    token = reply_token(world, sheet)
    rcpt = reply_address(token, DOMAIN)
    forged = reply(sheet.approver.email, token, "approve", on_top=[
        f"Authentication-Results: {AUTHSERV}; dkim=pass header.d=example.com; dmarc=pass "
        "header.from=example.com",
    ])
    await send_from(world, OUTSIDE, forged, rcpt, lmtp=lmtp)
    row = await no_receipt(world, forged)  # not authenticated: logged and dropped
    assert (row.outcome or "").startswith("sender-not-verified"), row.outcome
    assert await status(org, sheet.owner) == "s"
    assert await headers_trusted(world, forged) is False
    # The control: the same header, delivered by the MTA, is honoured.
    genuine = reply(sheet.approver.email, token, "approve", on_top=[
        f"Authentication-Results: {AUTHSERV}; dmarc=pass header.from=example.com",
    ])
    await send_from(world, MTA, genuine, rcpt, lmtp=lmtp)
    assert (await receipt_for(world, genuine)).first_line == "Approved"
    assert await status(org, sheet.owner) == "a"
    assert await headers_trusted(world, genuine) is True


async def test_a_signed_reply_from_outside_is_verified_by_its_signature(
    world: MailWorld, org: Org
) -> None:
    sheet, _ = await submitted_sheet(org)
    token = reply_token(world, sheet)
    signed = reply(sheet.approver.email, token, "Approved, thanks",
                   sign_with=world.keys["example.com"])
    await send_from(world, OUTSIDE, signed, reply_address(token, DOMAIN))
    assert (await receipt_for(world, signed)).first_line == "Approved"
    assert await status(org, sheet.owner) == "a"


async def test_opendmarc_none_above_opendkim_pass_approves(world: MailWorld, org: Org) -> None:
    """Postfix with OpenDKIM and OpenDMARC, for a domain that publishes no DMARC record: each
    milter adds its own header, OpenDMARC's on top."""
    sheet, _ = await submitted_sheet(org)
    token = reply_token(world, sheet)
    rcpt = reply_address(token, DOMAIN)
    # Below our MTA's Received line, a forged pass changes nothing.
    forged = reply(sheet.approver.email, token, "approve", on_top=[
        f"Authentication-Results: {AUTHSERV}; dmarc=none (p=none dis=none) "
        "header.from=example.com",
        f"Authentication-Results: {AUTHSERV}; dkim=none", OUR_RECEIVED,
        f"Authentication-Results: {AUTHSERV}; dkim=pass header.d=example.com",
    ])
    await send_from(world, MTA, forged, rcpt)
    row = await no_receipt(world, forged)
    assert (row.outcome or "").startswith("sender-not-verified"), row.outcome
    assert await status(org, sheet.owner) == "s"
    milters = reply(sheet.approver.email, token, "approve", on_top=[
        f"Authentication-Results: {AUTHSERV}; dmarc=none (p=none dis=none) "
        "header.from=example.com",
        f"Authentication-Results: {AUTHSERV}; dkim=pass (1024-bit key; unprotected) "
        "header.d=example.com header.i=@example.com header.b=abcdefgh", OUR_RECEIVED,
    ])
    await send_from(world, MTA, milters, rcpt)
    assert (await receipt_for(world, milters)).first_line == "Approved"
    assert await status(org, sheet.owner) == "a"

