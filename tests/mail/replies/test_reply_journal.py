"""What reaches the Journal when an approver answers a review by mail in the shapes of
tests/mail/reply_shapes.toml: DKIM-signed replies sent over SMTP to a live timebot's
listener, the Journal read back through GraphQL, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import tomllib
import uuid
from collections.abc import AsyncIterator
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import formatdate
from pathlib import Path

import aiosmtplib
import httpx
import pytest
from sqlalchemy import select

from mail.queues.inbox import message_key
from tests.net import free_port
from tests.protocol.reply_helpers import DOMAIN, DkimKey, Sheet, submitted_sheet
from tests.support import DAY_MS, LiveServer, Org, new_org, start_live_server, stop_live_server
from timebot.secret_key.tokens import make_token, reply_address
from timebot.state.models import InboxMessage

KEY = DkimKey.generate("example.com")
SHAPES = {
    case["name"]: case
    for case in tomllib.loads(
        (Path(__file__).parents[1] / "reply_shapes.toml").read_text(encoding="utf-8")
    )["case"]
}
JOURNAL = "query($r: SvcReferenceInput!) { getMessages(of: $r) { content type author { id } } }"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def live(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[LiveServer]:
    root = tmp_path_factory.mktemp(f"reply-journal-{request.param}")
    (root / "dkim.txt").write_text(f"{KEY.line()}\n")
    port = free_port()
    server = await start_live_server(request.param, root / "data", extra_env={
        "TIMEBOT_MAIL_DOMAIN": DOMAIN, "TIMEBOT_DKIM_TXT_FILE": str(root / "dkim.txt"),
        "TIMEBOT_SMTP_PORT": str(port),
    })
    try:
        yield server
    finally:
        await stop_live_server(server)


@pytest.fixture
async def org(live: LiveServer) -> AsyncIterator[Org]:
    async with httpx.AsyncClient(timeout=30) as http:
        yield await new_org(live, http)


async def _send(live: LiveServer, sheet: Sheet, body: str) -> None:
    """The approver's reply with `body` as its client wrote it, signed, over SMTP."""
    token = make_token(live.settings.secret_key, "reply", event_id=sheet.event_id,
                       approver_id=sheet.approver.id, stage=0,
                       expires_at_ms=live.clock.now_ms() + DAY_MS)
    message = EmailMessage()
    message["From"] = f"Mia <{sheet.approver.email}>"
    message["To"] = reply_address(token, DOMAIN)
    message["Subject"] = "Re: Timesheet of Bob"
    message["Date"] = formatdate()
    message["Message-ID"] = f"<{uuid.uuid4().hex}@example.com>"
    message["In-Reply-To"] = f"<{token}.review@{DOMAIN}>"
    message.set_content(body)
    raw = KEY.sign(message.as_bytes(policy=SMTP))
    await aiosmtplib.send(raw, sender=sheet.approver.email, recipients=[message["To"]],
                          hostname="127.0.0.1", port=live.settings.smtp_port)
    runtime = live.app.state.runtime
    for _ in range(400):
        async with runtime.state_sessions() as session:
            row = await session.scalar(
                select(InboxMessage).where(InboxMessage.message_key == message_key(raw)))
        if row is not None and row.status in ("done", "failed"):
            assert row.status == "done", row.outcome
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the reply was not processed")


async def _journal(org: Org, sheet: Sheet) -> list[tuple[str, str]]:
    journal = await org.admin.gql(JOURNAL, {"r": {"id": sheet.event_id, "type": "approvalEvent"}})
    return [(m["content"], m["author"]["id"]) for m in journal["getMessages"]
            if m["type"] == "message"]


@pytest.mark.parametrize(
    "shape",
    ["fr-outlook-ios", "de-outlook-android-signature-with-link", "es-outlook-rule-and-block",
     "vi-unquoted-history", "polymail-three-line-attribution", "bottom-posted-comment",
     "forwarded-message-stays-out"],
)
async def test_the_journal_gets_the_writers_words(
    live: LiveServer, org: Org, shape: str
) -> None:
    sheet, _ = await submitted_sheet(org)
    case = SHAPES[shape]
    await _send(live, sheet, case["text"])
    assert await _journal(org, sheet) == [(case["journal"], sheet.approver.id)]
