"""Issue 23: mail from machines is never answered, and an error receipt goes only to a sender
who authenticated (DKIM, or a trusted Authentication-Results); other mail timebot cannot act
on is logged and dropped. Real SMTP sessions (aiosmtplib) to a live timebot; the outbox table
and the Maildir outbox are looked at, the log lines captured."""

from __future__ import annotations

import email
import email.policy
import tomllib
import uuid
from collections.abc import AsyncIterator, Iterator
from email.message import EmailMessage
from email.utils import formatdate
from pathlib import Path
from typing import Any

import httpx
import pytest
import structlog

from tests.protocol.reply_helpers import (
    AUTHSERV,
    DOMAIN,
    MailWorld,
    no_receipt,
    receipt_for,
    reply,
    reply_token,
    smtp_send,
    smtp_world,
    submitted_sheet,
)
from tests.service.test_approvals_support import state
from tests.support import HOUR_MS, Org, new_org
from timebot.secret_key.tokens import reply_address

MACHINE = Path(__file__).parents[1] / "mail" / "machine_corpus"
CORPUS_TO = "approvals+afs2d4gc2ts7mbyyfe5ewznb6dbnjzpwa4mcsosmcfrxbr7mfaoji@timebot.localhost"
# One message of each kind of tests/mail/machine_corpus (each with a non-null envelope sender).
MACHINE_SAMPLES = [
    "list-mailman3-owner-rfc2369", "list-majordomo-request", "list-fml-x-ml",
    "noreply-notifications", "postmaster-underscore", "bounce-gmail-dsn-envelope",
    "bounce-exim-mail-delivery-failed", "bounce-exchange-undeliverable", "arf-rfc5965",
    "arf-draft-multipart-mixed", "auto-exchange-rules-loop-only", "auto-vacation-program-x-mailer",
    "auto-lotus-notes-auto",
]


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[MailWorld]:
    root = tmp_path_factory.mktemp(f"backscatter-{request.param}")
    async with smtp_world(request.param, root) as world:
        yield world


@pytest.fixture
async def org(world: MailWorld) -> AsyncIterator[Org]:
    async with httpx.AsyncClient(timeout=30) as http:
        yield await new_org(world.live, http)


@pytest.fixture
def logs() -> Iterator[list[dict[str, Any]]]:
    with structlog.testing.capture_logs() as captured:
        yield captured




def authenticated(raw: bytes, domain: str) -> bytes:
    """As our MTA passes it on: its own DMARC pass on top (trusted from 127.0.0.1)."""
    return (f"Authentication-Results: {AUTHSERV}; dmarc=pass header.from={domain}\r\n"
            .encode() + raw)


def withheld(logs: list[dict[str, Any]], code: str) -> list[dict[str, Any]]:
    return [line for line in logs if line.get("event") == "receipt_withheld"
            and line.get("code") == code]


async def status(org: Org, owner: object) -> str:
    return str((await state(org.admin, owner))["status"])  # type: ignore[arg-type]


# --- approval replies -------------------------------------------------------------------------


async def test_an_unauthenticated_wrong_sender_gets_nothing(
    world: MailWorld, org: Org, logs: list[dict[str, Any]]
) -> None:
    """Anyone may write From: victim@ to a reply address: answering would mail the victim
    (backscatter), with the approver's reply token in its Reply-To."""
    sheet, _ = await submitted_sheet(org)
    token = reply_token(world, sheet)
    raw = reply("victim@example.com", token, "approve")  # not signed, no trusted results
    await smtp_send(world, raw, reply_address(token, DOMAIN), "victim@example.com")
    row = await no_receipt(world, raw)
    assert (row.outcome or "").startswith("wrong-sender; no receipt"), row.outcome
    [line] = withheld(logs, "wrong-sender")
    assert line["sender"] == "victim@example.com"
    assert await status(org, sheet.owner) == "s"


async def test_an_authenticated_stranger_gets_one_plain_refusal_an_hour(
    world: MailWorld, org: Org, logs: list[dict[str, Any]]
) -> None:
    sheet, _ = await submitted_sheet(org)
    token = reply_token(world, sheet)
    key = world.keys["example.com"]
    first = reply("stranger@example.com", token, "approve", sign_with=key)
    await smtp_send(world, first, reply_address(token, DOMAIN), "stranger@example.com")
    receipt = await receipt_for(world, first)
    assert receipt.envelope_to == "stranger@example.com"
    assert receipt.first_line == "Nothing changed" and "another approver" in receipt.text
    message = receipt.message
    assert message["Reply-To"] is None
    assert token not in str(message["Message-ID"]) and token not in receipt.text
    assert "approvals+" not in message.as_string()
    # a second attempt within the hour: nothing (not a mail cannon), logged in its row
    second = reply("stranger@example.com", token, "approve please", sign_with=key)
    await smtp_send(world, second, reply_address(token, DOMAIN), "stranger@example.com")
    row = await no_receipt(world, second)
    assert "rate-limited" in (row.outcome or ""), row.outcome
    world.live.clock.advance(HOUR_MS + 60_000)
    try:
        third = reply("stranger@example.com", token, "approve!", sign_with=key)
        await smtp_send(world, third, reply_address(token, DOMAIN), "stranger@example.com")
        assert (await receipt_for(world, third)).first_line == "Nothing changed"
    finally:
        world.live.clock.advance(-(HOUR_MS + 60_000))
    assert withheld(logs, "wrong-sender") == []
    assert await status(org, sheet.owner) == "s"


async def test_the_approvers_address_unauthenticated_gets_nothing(
    world: MailWorld, org: Org, logs: list[dict[str, Any]]
) -> None:
    sheet, _ = await submitted_sheet(org)
    token = reply_token(world, sheet)
    raw = reply(sheet.approver.email, token, "approve")
    await smtp_send(world, raw, reply_address(token, DOMAIN), sheet.approver.email)
    row = await no_receipt(world, raw)
    assert (row.outcome or "").startswith("sender-not-verified; no receipt"), row.outcome
    assert [line["sender"] for line in logs if line.get("event") == "sender_not_verified"] \
        == [sheet.approver.email]
    assert await status(org, sheet.owner) == "s"


async def test_an_expired_token_unauthenticated_gets_nothing(
    world: MailWorld, org: Org
) -> None:
    sheet, _ = await submitted_sheet(org)
    token = reply_token(world, sheet, expires_in_ms=-2 * HOUR_MS)
    raw = reply("victim@example.com", token, "approve")
    await smtp_send(world, raw, reply_address(token, DOMAIN), "victim@example.com")
    row = await no_receipt(world, raw)
    assert (row.outcome or "").startswith("link-expired; no receipt"), row.outcome


def machine_mail(name: str, to: str) -> tuple[bytes, str]:
    """A message of the machine corpus addressed to `to`, authenticated by our MTA (so that
    only the loop guard stands between it and an answer); and its envelope sender."""
    expected = tomllib.loads((MACHINE / "expected.toml").read_text(encoding="utf-8"))[name]
    raw = (MACHINE / f"{name}.eml").read_bytes().replace(CORPUS_TO.encode(), to.encode())
    parsed = email.message_from_bytes(raw, policy=email.policy.default)
    del parsed["Message-ID"]
    parsed["Message-ID"] = f"<{uuid.uuid4().hex}@machine.example>"  # one inbox row each run
    domain = str(parsed["From"].addresses[0].domain)
    return authenticated(parsed.as_bytes(policy=email.policy.SMTP), domain), expected["envelope"]


@pytest.mark.parametrize("name", MACHINE_SAMPLES)
async def test_machine_mail_of_each_kind_is_never_answered(
    world: MailWorld, org: Org, name: str
) -> None:
    sheet, _ = await submitted_sheet(org)
    address = reply_address(reply_token(world, sheet), DOMAIN)
    raw, envelope = machine_mail(name, address)
    await smtp_send(world, raw, address, envelope)
    row = await no_receipt(world, raw)
    assert (row.outcome or "").startswith("ignored ("), row.outcome
    assert await status(org, sheet.owner) == "s"


# --- time@ ---------------------------------------------------------------------------------


def time_mail(sender: str, body: str, *, headers: dict[str, str] | None = None) -> bytes:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = f"time@{DOMAIN}"
    message["Subject"] = "my hours"
    message["Date"] = formatdate()
    message["Message-ID"] = f"<{uuid.uuid4().hex}@client.example.com>"
    for name, value in (headers or {}).items():
        message[name] = value
    message.set_content(body)
    return message.as_bytes(policy=email.policy.SMTP)


async def test_time_mail_from_an_unauthenticated_sender_gets_nothing(
    world: MailWorld, org: Org, logs: list[dict[str, Any]]
) -> None:
    member = await org.add_member("Erin", "employee")
    unknown = time_mail("victim@example.com", "2h @acme")
    await smtp_send(world, unknown, f"time@{DOMAIN}", "victim@example.com")
    row = await no_receipt(world, unknown)
    assert (row.outcome or "").startswith("unknown-sender; no receipt"), row.outcome
    assert [line["sender"] for line in withheld(logs, "unknown-sender")] == ["victim@example.com"]
    known = time_mail(member.email, "2h @acme")
    await smtp_send(world, known, f"time@{DOMAIN}", member.email)
    row = await no_receipt(world, known)
    assert (row.outcome or "").startswith("sender-not-verified; no receipt"), row.outcome


async def test_time_mail_from_an_authenticated_stranger_gets_one_refusal(
    world: MailWorld, org: Org
) -> None:
    first = authenticated(time_mail("mallory@example.com", "2h @acme"), "example.com")
    await smtp_send(world, first, f"time@{DOMAIN}", "mallory@example.com")
    receipt = await receipt_for(world, first)
    assert receipt.first_line == "Nothing changed"
    assert "is not the address of a person" in receipt.text
    second = authenticated(time_mail("mallory@example.com", "3h @acme"), "example.com")
    await smtp_send(world, second, f"time@{DOMAIN}", "mallory@example.com")
    assert "rate-limited" in ((await no_receipt(world, second)).outcome or "")


async def test_an_auto_reply_to_time_is_never_answered(world: MailWorld, org: Org) -> None:
    member = await org.add_member("Erin", "employee")
    domain = member.email.rpartition("@")[2]
    for headers in ({"Auto-Submitted": "auto-replied"}, {"X-Autoreply": "yes"},
                    {"List-Unsubscribe": "<mailto:leave@example.com>"}):
        raw = authenticated(time_mail(member.email, "I am away until Monday.",
                                      headers=headers), domain)
        await smtp_send(world, raw, f"time@{DOMAIN}", member.email)
        row = await no_receipt(world, raw)
        assert (row.outcome or "").startswith("ignored ("), row.outcome
