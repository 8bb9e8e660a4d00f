"""Helpers for the reply-by-mail end-to-end tests (no tests here): a live timebot with SMTP,
LMTP and IMAP configured, DKIM keys of our own published through TIMEBOT_DKIM_TXT_FILE, reply
e-mails as mail clients write them, swaks to send them, and the Maildir outbox to read the
receipts from."""

from __future__ import annotations

import asyncio
import base64
import email
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.policy import SMTP, default
from email.utils import formatdate
from pathlib import Path
from typing import Any

import aiosmtplib
import dkim
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from sqlalchemy import select

from mail.queues.inbox import message_key
from tests.net import free_port
from tests.protocol.dovecot import PASSWORD, Dovecot
from tests.service.test_approvals_support import (
    WEEK,
    WEEK_END,
    add_record,
    manage,
    set_stages,
    submit,
)
from tests.support import DAY_MS, LiveServer, Member, Org, start_live_server, stop_live_server
from timebot.secret_key.tokens import make_token, reply_address
from timebot.state.models import InboxMessage, OutboxMessage

DOMAIN = "timebot.localhost"
AUTHSERV = "mx.timebot.test"
IMAP_USER = "replies"
SELECTOR = "s1"


@dataclass
class DkimKey:
    domain: str
    private_pem: bytes
    txt: str

    @classmethod
    def generate(cls, domain: str) -> DkimKey:
        key = rsa.generate_private_key(public_exponent=65537, key_size=1024)
        private = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
        public = key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        return cls(domain, private, f"v=DKIM1; k=rsa; p={base64.b64encode(public).decode()}")

    def line(self) -> str:
        return f"{SELECTOR}._domainkey.{self.domain} {self.txt}"

    def sign(self, raw: bytes, *, length: bool = False) -> bytes:
        signature = dkim.sign(
            raw, SELECTOR.encode(), self.domain.encode(), self.private_pem,
            include_headers=[b"from", b"to", b"subject", b"message-id", b"date",
                             b"in-reply-to"],
            length=length,
        )
        return bytes(signature) + raw


@dataclass
class MailWorld:
    """The live server with mail in, and everything needed to talk to it."""

    live: LiveServer
    dovecot: Dovecot
    smtp_port: int
    lmtp_port: int
    keys: dict[str, DkimKey] = field(default_factory=dict)
    imap_user: str = IMAP_USER

    @property
    def runtime(self) -> Any:
        return self.live.app.state.runtime

    @property
    def mail(self) -> Any:
        return self.live.app.state.mail

    @property
    def maildir(self) -> Path:
        return self.live.settings.outbox_dir / "new"


@dataclass
class Sheet:
    """A submitted timesheet of Bob, waiting for his people manager Mia."""

    org: Org
    owner: Member
    approver: Member
    event_id: str


async def submitted_sheet(
    org: Org, stages: list[dict[str, Any]] | None = None, approvers: int = 1
) -> tuple[Sheet, list[Member]]:
    owner = await org.add_member("Bob", "employee")
    managers = [await org.add_member(f"Mia{index}", "manager") for index in range(approvers)]
    for manager in managers:
        await manage(org, manager, owner)
    await set_stages(org, stages or [{"type": "ppm"}])
    await add_record(owner, owner, day=1, hours=8)
    event = await submit(owner, owner)
    assert event["status"] == "s", event
    return Sheet(org, owner, managers[0], event["submitId"] or event["id"]), managers


def reply_token(world: MailWorld, sheet: Sheet, approver: Member | None = None, stage: int = 0,
                expires_in_ms: int = 7 * DAY_MS) -> str:
    return make_token(
        world.live.settings.secret_key, "reply", event_id=sheet.event_id,
        approver_id=(approver or sheet.approver).id, stage=stage,
        expires_at_ms=world.live.clock.now_ms() + expires_in_ms,
    )


def reply(
    sender: str,
    token: str,
    body: str,
    *,
    to: str | None = None,
    subject: str = "Re: Timesheet of Bob for 2026-03-02 to 2026-03-08",
    headers: dict[str, str] | None = None,
    sign_with: DkimKey | None = None,
    length: bool = False,
    on_top: list[str] | None = None,
    in_reply_to: str | None = None,
) -> bytes:
    """A reply as a mail client writes it (quoted history included), optionally DKIM-signed;
    `on_top`: header lines added above everything afterwards (as a receiving MTA does);
    `in_reply_to`: the Message-ID replied to (by default one of ours carrying the token)."""
    message = EmailMessage()
    message["From"] = f"Someone <{sender}>"
    message["To"] = to or reply_address(token, DOMAIN)
    message["Subject"] = subject
    message["Date"] = formatdate()
    message["Message-ID"] = f"<{uuid.uuid4().hex}@{sender.rpartition('@')[2]}>"
    message["In-Reply-To"] = in_reply_to or f"<{token}.review@{DOMAIN}>"
    for name, value in (headers or {}).items():
        message[name] = value
    message.set_content(
        f"{body}\n\nOn Mon, 9 Mar 2026 at 09:00, timebot <timebot@{DOMAIN}> wrote:\n"
        "> Bob submitted his timesheet for 2026-03-02 to 2026-03-08: 8 h.\n"
        "> Reply approve, or reject with a reason.\n"
    )
    raw = message.as_bytes(policy=SMTP)
    if sign_with is not None:
        raw = sign_with.sign(raw, length=length)
    for line in reversed(on_top or []):
        raw = line.encode() + b"\r\n" + raw
    return raw


@asynccontextmanager
async def smtp_world(backend: str, root: Path) -> AsyncIterator[MailWorld]:
    """A live server with its SMTP listener, trusting AUTHSERV's Authentication-Results and
    verifying DKIM for example.com against a key of its own (no Dovecot, no LMTP)."""
    keys = {"example.com": DkimKey.generate("example.com")}
    txt = root / "dkim.txt"
    txt.write_text("".join(f"{key.line()}\n" for key in keys.values()))
    smtp_port = free_port()
    live = await start_live_server(backend, root / "data", extra_env={
        "TIMEBOT_SMTP_PORT": str(smtp_port),
        "TIMEBOT_MAIL_DOMAIN": DOMAIN,
        "TIMEBOT_MAIL_TRUSTED_AUTHSERV_IDS": AUTHSERV,
        "TIMEBOT_DKIM_TXT_FILE": str(txt),
    })
    try:
        yield MailWorld(live, None, smtp_port, 0, keys)  # type: ignore[arg-type]
    finally:
        await stop_live_server(live)


async def smtp_send(world: MailWorld, raw: bytes, rcpt: str, mail_from: str) -> None:
    """One message to timebot's SMTP listener (aiosmtplib), accepted for its recipient."""
    client = aiosmtplib.SMTP(hostname="127.0.0.1", port=world.smtp_port, timeout=20,
                             start_tls=False)
    await client.connect()
    try:
        errors, _ = await client.sendmail(mail_from, [rcpt], raw)
        assert not errors, errors
    finally:
        client.close()


async def swaks(port: int, rcpt: str, raw: bytes, *, lmtp: bool = False,
                mail_from: str = "sender@example.com", tmp: Path) -> tuple[int, str]:
    path = tmp / f"{uuid.uuid4().hex}.eml"
    path.write_bytes(raw)
    extra = ["--protocol", "LMTP"] if lmtp else []
    process = await asyncio.create_subprocess_exec(
        "swaks", "--server", f"127.0.0.1:{port}", "--to", rcpt, "--from", mail_from,
        "--helo", "client.example.com", "--timeout", "20", "--data", str(path), *extra,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await process.communicate()
    return process.returncode or 0, output.decode(errors="replace")


async def processed(world: MailWorld, raw: bytes, wait_s: float = 20.0) -> InboxMessage:
    """Wait until the inbox row of this message is processed (done or failed)."""
    key = message_key(raw)
    deadline = asyncio.get_running_loop().time() + wait_s
    while True:
        async with world.runtime.state_sessions() as session:
            row = await session.scalar(select(InboxMessage).where(InboxMessage.message_key == key))
        if row is not None and row.status in ("done", "failed"):
            return row  # type: ignore[no-any-return]
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"not processed in time: {row and (row.status, row.outcome)}")
        await asyncio.sleep(0.05)


async def receipt_rows(world: MailWorld, raw: bytes) -> list[OutboxMessage]:
    async with world.runtime.state_sessions() as session:
        rows = await session.scalars(
            select(OutboxMessage).where(OutboxMessage.dedupe_key == f"receipt:{message_key(raw)}")
        )
        return list(rows)


def _message_id_of(raw: bytes) -> str:
    parsed = email.message_from_bytes(raw, policy=default)
    return str(parsed["Message-ID"]).strip()


@dataclass
class Receipt:
    envelope_from: str
    envelope_to: str
    message: Any  # email.message.EmailMessage

    @property
    def text(self) -> str:
        return str(self.message.get_body(("plain",)).get_content())

    @property
    def html(self) -> str:
        return str(self.message.get_body(("html",)).get_content())

    @property
    def first_line(self) -> str:
        return self.text.splitlines()[0]


def maildir_receipts(world: MailWorld, raw: bytes) -> list[Receipt]:
    wanted = _message_id_of(raw)
    found = []
    for path in sorted(world.maildir.glob("*")):
        message = email.message_from_bytes(path.read_bytes(), policy=default)
        if str(message.get("In-Reply-To", "")).strip() == wanted:
            found.append(Receipt(str(message["X-Timebot-Envelope-From"]),
                                 str(message["X-Timebot-Envelope-To"]), message))
    return found


async def receipt_for(world: MailWorld, raw: bytes, wait_s: float = 20.0) -> Receipt:
    """The one receipt answering this reply, from the Maildir outbox."""
    await processed(world, raw, wait_s)
    deadline = asyncio.get_running_loop().time() + wait_s
    while True:
        found = maildir_receipts(world, raw)
        if found:
            assert len(found) == 1, f"{len(found)} receipts"
            return found[0]
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("no receipt in the outbox")
        await asyncio.sleep(0.05)


async def no_receipt(world: MailWorld, raw: bytes) -> InboxMessage:
    row = await processed(world, raw)
    assert await receipt_rows(world, raw) == [], row.outcome
    assert maildir_receipts(world, raw) == []
    return row


def imap_url(dovecot: Dovecot) -> str:
    return f"imap://{IMAP_USER}:{PASSWORD}@127.0.0.1:{dovecot.port}/INBOX"


__all__ = ["WEEK", "WEEK_END"]
