"""An approval reply's receipt and its inbox row are one commit (issue #26): the reply's outcome,
its receipt in the outbox and the inbox message marked done are written together, so a worker
that dies right after the reply leaves nothing to do again, and a receipt that could not be
written leaves the message to be processed again. Either way: one approval, one receipt. On
SQLite and PostgreSQL, with the approver's signed reply in the inbox as the SMTP listener puts
it there, processed by an inbox worker of the test's own (the live server's are stopped)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from sqlalchemy import event, select

from mail.queues.inbox import InboundMessage, Inbox, InboxWorker, message_key
from tests.protocol.reply_helpers import DOMAIN, DkimKey, Sheet, reply, submitted_sheet
from tests.support import DAY_MS, LiveServer, Org, new_org, start_live_server, stop_live_server
from timebot.secret_key.tokens import make_token, reply_address
from timebot.state.models import InboxMessage, MailReply, OutboxMessage
from timebot.state.queue import FinishBatch, claim_records

KEY = DkimKey.generate("example.com")
JOURNAL = "query($r: SvcReferenceInput!) { getMessages(of: $r) { type } }"
LEASE_MS = 120_000


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def live(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[LiveServer]:
    root = tmp_path_factory.mktemp(f"reply-commits-{request.param}")
    (root / "dkim.txt").write_text(f"{KEY.line()}\n")
    server = await start_live_server(request.param, root / "data", extra_env={
        "TIMEBOT_MAIL_DOMAIN": DOMAIN, "TIMEBOT_DKIM_TXT_FILE": str(root / "dkim.txt"),
    })
    inbound = server.app.state.mail.wake_inbox.__self__  # mail.inbound_component
    for worker in inbound.workers:  # the test's worker alone claims
        await worker.stop()
    try:
        yield server
    finally:
        await stop_live_server(server)


@pytest.fixture
async def org(live: LiveServer) -> AsyncIterator[Org]:
    async with httpx.AsyncClient(timeout=30) as http:
        yield await new_org(live, http)


def _worker(live: LiveServer) -> InboxWorker:
    inbound = live.app.state.mail.wake_inbox.__self__
    inbox: Inbox = live.app.state.mail.inbox
    return InboxWorker(inbox, inbound.workers[0].processor, lease_ms=LEASE_MS)


async def _accepted(live: LiveServer, sheet: Sheet) -> bytes:
    token = make_token(live.settings.secret_key, "reply", event_id=sheet.event_id,
                       approver_id=sheet.approver.id, stage=0,
                       expires_at_ms=live.clock.now_ms() + DAY_MS)
    raw = reply(sheet.approver.email, token, "approve", sign_with=KEY)
    assert await live.app.state.mail.inbox.accept(
        raw, sheet.approver.email, [reply_address(token, DOMAIN)], "smtp")
    return raw


async def _claim(live: LiveServer, worker: InboxWorker, at_ms: int) -> list[Any]:
    return await claim_records(
        live.app.state.mail.inbox.sessions, InboxMessage, owner=worker.owner, now_ms=at_ms,
        lease_ms=LEASE_MS, limit=10, due_column=InboxMessage.next_attempt_ms,
        order_column=InboxMessage.received_ms, lane_column=InboxMessage.lane)


async def _rows(live: LiveServer, raw: bytes) -> tuple[InboxMessage, MailReply, list[Any]]:
    key = message_key(raw)
    async with live.app.state.runtime.state_sessions() as session:
        inbox = await session.scalar(select(InboxMessage).where(InboxMessage.message_key == key))
        intent = await session.get(MailReply, key)
        receipts = list(await session.scalars(select(OutboxMessage).where(
            OutboxMessage.dedupe_key == f"receipt:{key}")))
    assert inbox is not None and intent is not None
    return inbox, intent, receipts


async def _approvals(org: Org, sheet: Sheet) -> int:
    journal = await org.admin.gql(JOURNAL, {"r": {"id": sheet.event_id, "type": "approvalEvent"}})
    return len([m for m in journal["getMessages"] if m["type"] == "timesheetApproved"])


async def test_a_worker_that_dies_after_the_reply_leaves_nothing_to_do_again(
    live: LiveServer, org: Org
) -> None:
    sheet, _ = await submitted_sheet(org)
    raw = await _accepted(live, sheet)
    worker = _worker(live)
    now = live.clock.now_ms()
    [row] = await _claim(live, worker, now)
    # The reply processed; the process dies before the worker's batch of outcomes is written.
    await worker._handle(row, FinishBatch(worker.inbox.sessions, InboxMessage, worker.owner, 60))
    inbox, intent, receipts = await _rows(live, raw)
    assert (inbox.status, intent.outcome, len(receipts)) == ("done", "approved", 1), (
        inbox.status, inbox.outcome)
    assert (inbox.outcome or "").startswith("approved; receipt queued")
    # After the lease, another worker finds nothing of it to take over.
    assert await _claim(live, _worker(live), now + LEASE_MS + 1) == []
    assert await _approvals(org, sheet) == 1


async def test_a_receipt_that_cannot_be_written_leaves_the_reply_to_be_processed_again(
    live: LiveServer, org: Org
) -> None:
    sheet, _ = await submitted_sheet(org)
    raw = await _accepted(live, sheet)
    engine = live.app.state.runtime.state_engine.sync_engine
    failures: list[str] = []

    def fail_the_receipt(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().startswith("INSERT INTO outbox_messages") and not failures:
            failures.append(statement)
            raise RuntimeError("the disk is full")

    worker = _worker(live)
    now = live.clock.now_ms()
    event.listen(engine, "before_cursor_execute", fail_the_receipt)
    try:
        await worker.run_once()
    finally:
        event.remove(engine, "before_cursor_execute", fail_the_receipt)
    assert failures, "the receipt was not written"
    inbox, intent, receipts = await _rows(live, raw)
    # The approval was made (its intent recorded before); nothing of the receipt's commit.
    assert (inbox.status, intent.outcome, receipts) == ("queued", None, []), inbox.outcome
    assert await _approvals(org, sheet) == 1
    # Tried again after its backoff: answered as the first attempt would have been, once.
    [row] = await _claim(live, worker, now + 3_600_000)
    retried = InboundMessage(row.id, row.source, row.mail_from, list(row.rcpt_tos), row.raw,
                             row.attempts, row.message_key, row.headers_trusted,
                             row.lease_owner)
    outcome = await worker.processor(retried)
    assert outcome.startswith("approved; receipt queued"), outcome
    inbox, intent, receipts = await _rows(live, raw)
    assert (inbox.status, intent.outcome, len(receipts)) == ("done", "approved", 1)
    assert b"Approved" in receipts[0].raw
    assert await _approvals(org, sheet) == 1


async def _notices(live: LiveServer, email: str) -> list[OutboxMessage]:
    rows = await live.app.state.mail.outbox.messages("owner-notice")
    return [row for row in rows if email in row.rcpt_tos]


async def test_an_owners_notice_is_queued_with_its_events_done_mark(
    live: LiveServer, org: Org
) -> None:
    """The final approval's event dispatched, but its done mark not written (the process died,
    the database refused): no notice either; dispatched again after the lease, one notice."""
    sheet, _ = await submitted_sheet(org)
    await live.app.state.runtime.subscriptions.ensure(org.id)  # its events reach timebot
    raw = await _accepted(live, sheet)
    engine = live.app.state.runtime.state_engine.sync_engine
    failures: list[str] = []

    def fail_the_done_mark(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        finishing = statement.lstrip().startswith("UPDATE received_events") \
            and "outcome" in statement and "received_events.id = " in statement  # not a claim
        if finishing and not failures:
            failures.append(statement)
            raise RuntimeError("the disk is full")

    event.listen(engine, "before_cursor_execute", fail_the_done_mark)
    offset = live.clock.offset_ms
    try:
        await _worker(live).run_once()
        inbox, _, _ = await _rows(live, raw)
        assert inbox.status == "done", inbox.outcome
        for _ in range(400):
            if failures:
                break
            await asyncio.sleep(0.05)
        assert failures, "the event was not dispatched"
        assert await _notices(live, sheet.owner.email) == []
        live.clock.offset_ms = offset + 2 * 120_000  # the event's lease has run out
        live.app.state.runtime.event_worker.wake()
        for _ in range(400):
            if await _notices(live, sheet.owner.email):
                break
            await asyncio.sleep(0.05)
        [notice] = await _notices(live, sheet.owner.email)
        assert "is approved" in notice.subject
    finally:
        live.clock.offset_ms = offset
        event.remove(engine, "before_cursor_execute", fail_the_done_mark)


@pytest.mark.parametrize("words", ["reject hours\x00 wrong", "approve\n\nfine\x00 by me",
                                   "looks \x00odd\x07 to me", "reject \x1b[31m\u202e"])
async def test_a_reply_whose_words_hold_control_characters_is_answered(
    live: LiveServer, org: Org, words: str
) -> None:
    """The reply's own words with a NUL or other control characters (PostgreSQL refuses a NUL
    in text): processed once, answered by one receipt — never failed and retried until set
    aside."""
    sheet, _ = await submitted_sheet(org)
    token = make_token(live.settings.secret_key, "reply", event_id=sheet.event_id,
                       approver_id=sheet.approver.id, stage=0,
                       expires_at_ms=live.clock.now_ms() + DAY_MS)
    raw = reply(sheet.approver.email, token, words, sign_with=KEY)
    assert await live.app.state.mail.inbox.accept(
        raw, sheet.approver.email, [reply_address(token, DOMAIN)], "smtp")
    await _worker(live).run_once()
    inbox, _intent, receipts = await _rows(live, raw)
    assert (inbox.status, inbox.attempts, len(receipts)) == ("done", 1, 1), inbox.outcome
