"""Inbound SMTP and LMTP driven by a real SMTP client (swaks): cheap refusals at RCPT time,
250 only once the message is committed, one row per message however often it is delivered."""

from __future__ import annotations

import asyncio
import shutil
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import delete

from mail.inbound.addresses import reply_token_check
from mail.inbound.listener import InboundHandler, start_listener
from mail.queues.inbox import Inbox
from plumbing.clock import Clock
from tests.net import free_port
from tests.protocol.conftest import StateDB
from timebot.secret_key.tokens import make_token, reply_address
from timebot.state.models import InboxMessage

SECRET = "listener-secret"
DOMAIN = "timebot.localhost"
HOUR = 3_600_000

pytestmark = pytest.mark.skipif(shutil.which("swaks") is None, reason="swaks is not installed")


class Listener:
    def __init__(self, inbox: Inbox, port: int, lmtp_port: int) -> None:
        self.inbox = inbox
        self.port = port
        self.lmtp_port = lmtp_port
        self.accepted = 0


@pytest.fixture
async def listener(state_db: StateDB) -> AsyncIterator[Listener]:
    async with state_db.sessions() as session:
        await session.execute(delete(InboxMessage))
        await session.commit()
    clock = Clock(frozen_ms=1_800_000_000_000)
    inbox = Inbox(state_db.sessions, clock)
    check = reply_token_check(SECRET, clock.now_ms)
    port, lmtp_port = free_port(), free_port()
    result = Listener(inbox, port, lmtp_port)

    def count() -> None:
        result.accepted += 1

    smtp = await start_listener(
        InboundHandler(inbox, DOMAIN, check, count), "127.0.0.1", port, data_size_limit=64_000
    )
    lmtp = await start_listener(
        InboundHandler(inbox, DOMAIN, check, count, source="lmtp"), "127.0.0.1", lmtp_port,
        lmtp=True,
    )
    try:
        yield result
    finally:
        for server in (smtp, lmtp):
            server.close()
            await server.wait_closed()


def token(expires_at_ms: int = 1_800_000_000_000 + 24 * HOUR) -> str:
    return make_token(
        SECRET, "reply", event_id="a" * 24, approver_id="b" * 24, stage=0,
        expires_at_ms=expires_at_ms,
    )


async def swaks(port: int, to: str, *extra: str) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        "swaks", "--server", f"127.0.0.1:{port}", "--to", to, "--from", "ann@example.com",
        "--helo", "client.example.com", "--timeout", "20", *extra,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await process.communicate()
    return process.returncode or 0, output.decode(errors="replace")


async def test_a_reply_is_committed_before_250(listener: Listener) -> None:
    address = reply_address(token(), DOMAIN)
    code, output = await swaks(listener.port, address, "--body", "approve")
    assert code == 0, output
    assert "250 2.0.0 Message accepted" in output
    rows = await listener.inbox.all()
    assert [row.rcpt_tos for row in rows] == [[address]]
    assert rows[0].status == "queued" and b"approve" in rows[0].raw
    assert listener.accepted == 1


@pytest.mark.parametrize(
    "recipient",
    ["nobody@timebot.localhost", "approvals+garbage@timebot.localhost", "time@elsewhere.example"],
)
async def test_unknown_or_malformed_recipients_are_refused_at_rcpt(
    listener: Listener, recipient: str
) -> None:
    code, output = await swaks(listener.port, recipient)
    assert code != 0
    assert "550 5.1.1" in output
    assert await listener.inbox.all() == []


async def test_a_tampered_token_is_refused_and_an_expired_one_accepted(listener: Listener) -> None:
    genuine = token()
    tampered = genuine[:-1] + ("a" if genuine[-1] != "a" else "b")
    code, output = await swaks(listener.port, reply_address(tampered, DOMAIN))
    assert code != 0 and "550 5.1.1" in output
    expired = token(expires_at_ms=1_700_000_000_000)
    code, output = await swaks(listener.port, reply_address(expired, DOMAIN))
    assert code == 0, output  # accepted: the receipt will say the link expired


async def test_time_entry_address_and_case_insensitive_tokens(listener: Listener) -> None:
    code, output = await swaks(listener.port, "time@timebot.localhost", "--body", "2h @acme")
    assert code == 0, output
    code, output = await swaks(listener.port, reply_address(token(), DOMAIN).upper())
    assert code == 0, output


async def test_the_same_message_twice_is_one_row(listener: Listener) -> None:
    message_id = f"<{uuid.uuid4().hex}@mail.example.com>"
    address = reply_address(token(), DOMAIN)
    for port in (listener.port, listener.lmtp_port):
        protocol = ["--protocol", "LMTP"] if port == listener.lmtp_port else []
        code, output = await swaks(
            port, address, "--header", f"Message-Id: {message_id}", "--body", "approve",
            *protocol,
        )
        assert code == 0, output
    rows = await listener.inbox.all()
    assert len(rows) == 1 and rows[0].source == "smtp"
    assert listener.accepted == 1


async def test_lmtp_answers_once_per_recipient(listener: Listener) -> None:
    first, second = reply_address(token(), DOMAIN), "time@timebot.localhost"
    code, output = await swaks(
        listener.lmtp_port, f"{first},{second}", "--protocol", "LMTP", "--body", "approve"
    )
    assert code == 0, output
    assert output.count("250 2.0.0 Message accepted") == 2
    rows = await listener.inbox.all()
    assert rows[0].source == "lmtp" and sorted(rows[0].rcpt_tos) == sorted([first, second])


async def test_oversized_mail_is_refused(listener: Listener, tmp_path: Path) -> None:
    body = tmp_path / "body.txt"
    body.write_text("\n".join(["x" * 70] * 1000))
    code, output = await swaks(listener.port, "time@timebot.localhost", "--body", str(body))
    assert code != 0 and "552" in output
    assert await listener.inbox.all() == []


async def _converse(port: int, lines: list[bytes]) -> list[bytes]:
    """One SMTP session, line by line (raw bytes): each reply's first line."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    replies = [await reader.readline()]
    try:
        for line in lines:
            writer.write(line + b"\r\n")
            await writer.drain()
            reply = await reader.readline()
            while reply[3:4] == b"-":  # a multi-line reply: its last line counts
                reply = await reader.readline()
            replies.append(reply)
    finally:
        writer.close()
    return replies


@pytest.mark.parametrize("sender", [
    b"<ann\x00@example.com>", b"<ann@exa\x00mple.com>", b"<\xed\xa0\x80@example.com>",
    b"<\xff\xfe@example.com>", b"<" + b"a" * 400 + b"@example.com>", b"<\x1b[31m@example.com>",
])
async def test_a_sender_no_address_has_is_refused_at_mail_not_deferred(
    listener: Listener, sender: bytes
) -> None:
    """Bytes no address has in MAIL FROM (NUL, a lone surrogate, bytes that are not UTF-8,
    control characters, 400 characters): refused at once (5xx: ours, 553, or aiosmtpd's
    syntax error), never answered "try again later" after DATA — that would have the sender's
    server retry for days (it did: the commit failed on such a sender)."""
    replies = await _converse(listener.port, [
        b"EHLO client.example.com", b"MAIL FROM:" + sender + b" SMTPUTF8",
        b"RCPT TO:<time@" + DOMAIN.encode() + b">", b"QUIT",
    ])
    assert replies[2][:1] == b"5", replies
    assert not await listener.inbox.all()


@pytest.mark.parametrize("message_id", [
    b"<a\x00b@example.com>", b"<\xff\xfe@example.com>", b"<a\x01b@example.com>",
    b"<caf\xc3\xa9@example.com>", b"<" + b"m" * 900 + b"@example.com>",
])
async def test_any_message_id_is_kept_once(listener: Listener, message_id: bytes) -> None:
    """A Message-ID with control characters (NUL…): the message is accepted and keyed by its
    hash instead (on PostgreSQL it failed at the commit, answered "try again later"); any other,
    8-bit or long, keys it as it is read. Delivered twice, it is one row."""
    for _ in range(2):
        replies = await _converse(listener.port, [
            b"EHLO client.example.com", b"MAIL FROM:<ann@example.com> SMTPUTF8",
            b"RCPT TO:<time@" + DOMAIN.encode() + b">", b"DATA",
            b"Message-ID: " + message_id + b"\r\nSubject: hi\r\n\r\n2h on Apollo\r\n.",
            b"QUIT",
        ])
        assert replies[5].startswith(b"250 2.0.0"), replies
    [row] = await listener.inbox.all()
    controls = b"\x00" in message_id or b"\x01" in message_id
    assert row.message_key.startswith("sha256:" if controls else "mid:"), row.message_key
