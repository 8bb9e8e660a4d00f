"""Quick time entry by mail: swaks to a live timebot with SMTP on, the receipt in the Maildir
outbox, the records checked through GraphQL."""

from __future__ import annotations

import asyncio
import email
import email.policy
from collections.abc import AsyncIterator
from email.message import EmailMessage
from pathlib import Path

import aiosmtplib
import httpx
import pytest
from sqlalchemy import select

from tests.mail.reviews_support import org_events, settings_seen
from tests.net import free_port
from tests.support import LiveServer, Org, new_org, start_live_server, stop_live_server
from tests.timebot.timeentry_setup import Fixture, build, require_approval
from timebot.state.models import InboxMessage, OutboxMessage

HOUR = 3_600_000
TRUSTED = "mx.timebot.test"
SEVENTEEN_MARCH = 1_773_702_000_000  # Tue 17 Mar 2026 00:00 in Berlin


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[tuple[LiveServer, int]]:
    port = free_port()
    live = await start_live_server(
        request.param, tmp_path_factory.mktemp(f"mail-{request.param}"),
        extra_env={"TIMEBOT_SMTP_PORT": str(port), "TIMEBOT_MAIL_TRUSTED_AUTHSERV_IDS": TRUSTED},
    )
    try:
        yield live, port
    finally:
        await stop_live_server(live)


@pytest.fixture
async def fx(server: tuple[LiveServer, int]) -> AsyncIterator[Fixture]:
    live, _ = server
    async with httpx.AsyncClient(timeout=30) as http:
        org: Org = await new_org(live, http)
        yield await build(org)


async def swaks(port: int, sender: str, body: str, *, verified: bool = True,
                subject: str = "my hours") -> str:
    extra = ["--add-header", f"Authentication-Results: {TRUSTED}; dmarc=pass"
             f" header.from={sender.rpartition('@')[2]}"] if verified else []
    message_id = f"<{abs(hash((sender, body, subject)))}@client.example.com>"
    process = await asyncio.create_subprocess_exec(
        "swaks", "--server", f"127.0.0.1:{port}", "--to", "time@timebot.localhost",
        "--from", sender, "--helo", "client.example.com", "--timeout", "20",
        "--header", f"Subject: {subject}", "--header", f"Message-Id: {message_id}",
        "--body", body, *extra,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await process.communicate()
    assert process.returncode == 0, output.decode(errors="replace")
    return message_id


async def receipt_to(live: LiveServer, address: str, count: int = 1) -> EmailMessage:
    folder = Path(live.settings.outbox_dir) / "new"
    for _ in range(400):
        found = []
        for path in sorted(folder.glob("*")) if folder.exists() else []:
            parsed = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
            if address in str(parsed["To"]):
                found.append((path.stat().st_mtime_ns, parsed))
        if len(found) >= count:
            return sorted(found, key=lambda item: item[0])[-1][1]  # type: ignore[return-value]
        await asyncio.sleep(0.05)
    raise AssertionError(f"no receipt to {address}")


async def unanswered(live: LiveServer, message_id: str) -> str:
    """Wait until the mail is processed; assert that nothing answered it; its outcome."""
    key = f"mid:{message_id.strip('<>')}"
    runtime = live.app.state.runtime
    for _ in range(400):
        async with runtime.state_sessions() as session:
            row = await session.scalar(select(InboxMessage).where(InboxMessage.message_key == key))
            if row is not None and row.status in ("done", "failed"):
                answers = await session.scalars(
                    select(OutboxMessage).where(OutboxMessage.dedupe_key == f"receipt:{key}"))
                assert list(answers) == [], row.outcome
                return str(row.outcome)
        await asyncio.sleep(0.05)
    raise AssertionError(f"{message_id} not processed")


def text_of(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content())


async def test_a_verified_mail_logs_its_lines_and_gets_a_receipt(
    server: tuple[LiveServer, int], fx: Fixture
) -> None:
    live, port = server
    sender = fx.employee.email
    message_id = await swaks(
        port, sender,
        "2h30 @acme/website fixing the header\n1d vacation friday\n3h @nowhere\n"
        "1h @alp; 1:30 @beta !nb #wfh\nsee you\n\n-- \nErin\n",
    )
    receipt = await receipt_to(live, sender)
    body = text_of(receipt)
    assert body.splitlines()[0] == "Logged 3 entries, 3 not logged"
    assert "Not logged: see you\n  Not understood: How long?" in body
    assert "Erin" not in body
    assert "Logged: 2h 30m on Wed 18 Mar 2026 · @Acme/Website · “fixing the header”" in body
    assert "Logged: 1d on Fri 13 Mar 2026 · Vacation (1d counted as 8h" in body
    assert "Not logged: 3h @nowhere\n  @nowhere is no project or task" in body
    assert "did you mean: 1h on Wed 18 Mar 2026 · @Alpha" in body
    assert "Europe/Berlin" in body
    assert receipt["In-Reply-To"] == message_id
    assert message_id in str(receipt["References"])
    assert receipt["Subject"] == "Re: my hours"
    assert receipt["Auto-Submitted"] == "auto-replied"
    assert receipt["X-Timebot-Envelope-From"] == "<>"
    records = await fx.records()
    assert sorted(r["duration"] for r in records) == [90 * 60_000, 150 * 60_000, 8 * HOUR]
    beta = next(r for r in records if r["duration"] == 90 * 60_000)
    assert beta["wfh"] and beta["nonBillable"]


async def test_an_unverified_or_unknown_sender_logs_nothing(
    server: tuple[LiveServer, int], fx: Fixture
) -> None:
    """Unverified: logged and dropped, unanswered (its From may be anyone's); an authenticated
    stranger is told plainly (tests/protocol/test_backscatter.py has the rest)."""
    live, port = server
    message_id = await swaks(port, fx.employee.email, "2h @acme", verified=False)
    assert (await unanswered(live, message_id)).startswith("sender-not-verified; no receipt")
    stranger = "mallory@example.com"
    await swaks(port, stranger, "2h @acme")
    body = text_of(await receipt_to(live, stranger))
    assert "is not the address of a person" in body
    assert await fx.records() == []


async def test_a_locked_timesheet_is_refused_in_plain_words(
    server: tuple[LiveServer, int], fx: Fixture
) -> None:
    live, port = server
    await require_approval(fx.org)
    await fx.employee.gql(
        "mutation($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) {"
        " submitTimesheet(personId: $p, startTime: $s, endTime: $e) { id } }",
        {"p": fx.employee.id, "s": 1773615600000, "e": 1773615600000 + 7 * 86_400_000},
    )
    await swaks(port, fx.employee.email, "2h @acme\n1h @beta last fri", subject="Hours")
    body = text_of(await receipt_to(live, fx.employee.email))
    assert body.splitlines()[0] == "Logged 1 entry, 1 not logged"
    assert "Not logged: 2h @acme\n  The timesheet for " in body
    assert "is submitted for approval and locked for its owner." in body
    records = await fx.records()
    assert [r["projects"][0]["id"] for r in records] == [fx.ids["beta"]]


async def test_a_logged_absence_reports_the_allowance_left(
    server: tuple[LiveServer, int], fx: Fixture
) -> None:
    live, port = server
    berlin_2026, berlin_2027 = 1_767_222_000_000, 1_798_758_000_000  # 00:00 in Berlin
    await fx.org.admin.gql(
        "mutation($p: SvcId!, $a: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) {"
        " addPersonAbsenceQuota(personId: $p, absenceId: $a, startTime: $s, endTime: $e,"
        " available: 5) { id } }",
        {"p": fx.employee.id, "a": fx.ids["vacation"], "s": berlin_2026, "e": berlin_2027})
    await swaks(port, fx.employee.email, "1d vacation monday\n1d vacation tuesday\n",
                subject="time off")
    body = text_of(await receipt_to(live, fx.employee.email))
    assert body.splitlines()[0] == "Logged 2 entries"
    assert ("Mon 16 Mar 2026 · Vacation (1d counted as 8h (a working day is 8h)) — Vacation left:"
            " 4 days (until 31 Dec 2026)") in body
    assert "— Vacation left: 3 days (until 31 Dec 2026)" in body


async def test_a_new_lock_date_is_refused_by_the_front_at_once(
    server: tuple[LiveServer, int], fx: Fixture
) -> None:
    """The rules read for the first mail are forgotten on the service's settingsUpdate: the
    next mail's entry before the new lockDate is refused early, in the front's words (the
    clock stands still: no expiry involved)."""
    live, port = server
    runtime = live.app.state.runtime
    await runtime.subscriptions.ensure(fx.org.id)
    sender = fx.employee.email
    await swaks(port, sender, "1h @acme planning", subject="first")
    assert text_of(await receipt_to(live, sender)).splitlines()[0] == "Logged 1 entry"
    seen = len([e for e in await org_events(runtime, fx.org.id) if e.event == "settingsUpdate"])
    await fx.org.admin.gql(
        "mutation($id: SvcId!, $l: SvcTimestamp) { editPersonTimeSettingsLockDate(id: $id,"
        " lockDate: $l) { id } }", {"id": fx.employee.id, "l": SEVENTEEN_MARCH})
    await settings_seen(runtime, fx.org.id, seen + 1)
    await swaks(port, sender, "2h @acme monday design", subject="second")
    body = text_of(await receipt_to(live, sender, count=2))
    assert ("Entries before Tue 17 Mar 2026 are locked (lockDate): log time on Tue 17 Mar "
            "2026 or later.") in body, body
    assert len(await fx.records()) == 1


async def test_control_characters_anywhere_in_the_mail_still_get_a_receipt(
    server: tuple[LiveServer, int], fx: Fixture
) -> None:
    """NUL and other control characters, and bytes that are not UTF-8, in the Subject, the
    From's name, the Message-ID's neighbours and the body: the good line is logged and the
    receipt goes out (no column of text is handed a NUL: PostgreSQL would refuse it)."""
    live, port = server
    sender = fx.employee.email
    raw = (
        f"From: Erin \x00\x1b[31m <{sender}>\r\n"
        "To: time@timebot.localhost\r\n"
        "Subject: my \x00hours \x07\xff\r\n"
        "Message-ID: <nul-subject@client.example.com>\r\n"
        f"Authentication-Results: {TRUSTED}; dmarc=pass header.from={sender.rpartition('@')[2]}"
        "\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n"
        "2h @acme/website fixing \x00the header\r\n\x01\x02 junk \xff\xfe\r\n"
    ).encode("latin-1")
    await aiosmtplib.send(raw, sender=sender, recipients=["time@timebot.localhost"],
                          hostname="127.0.0.1", port=port, timeout=20)
    receipt = await receipt_to(live, sender)
    assert text_of(receipt).splitlines()[0].startswith("Logged 1 entry"), text_of(receipt)
    assert "\x00" not in str(receipt["Subject"])
    assert [r["duration"] for r in await fx.records()] == [2 * HOUR]
