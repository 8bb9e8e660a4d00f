"""What an approval reply reads and writes (issue #18's reply throughput), pinned on SQLite and
PostgreSQL: the owner's notice that follows a final approval takes the owner from the reply's
own read of the event (no getPerson) and dedupes in its one INSERT (no look-up before); a
comment reads no approval state. The replies go into the inbox as the SMTP listener puts them
there, DKIM-signed with a key published through TIMEBOT_DKIM_TXT_FILE."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from graphql import print_ast
from sqlalchemy import event, select

from mail.outbound.owner_notices import OwnerNotices
from mail.queues.inbox import message_key
from mail.review_component import component_of
from tests.protocol.reply_helpers import DOMAIN, DkimKey, Sheet, reply, submitted_sheet
from tests.service.test_approvals_support import WEEK, WEEK_END
from tests.support import DAY_MS, LiveServer, Org, new_org, start_live_server, stop_live_server
from timebot.events.bus import ServiceEvent
from timebot.secret_key.tokens import PeriodHint, make_token, message_id, period_hint, reply_address
from timebot.state.models import InboxMessage, OutboxMessage, ReceivedEvent

KEY = DkimKey.generate("example.com")


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def live(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[LiveServer]:
    root = tmp_path_factory.mktemp(f"reply-reads-{request.param}")
    (root / "dkim.txt").write_text(f"{KEY.line()}\n")
    server = await start_live_server(request.param, root / "data", extra_env={
        "TIMEBOT_MAIL_DOMAIN": DOMAIN, "TIMEBOT_DKIM_TXT_FILE": str(root / "dkim.txt"),
    })
    try:
        yield server
    finally:
        await stop_live_server(server)


@pytest.fixture
async def org(live: LiveServer) -> AsyncIterator[Org]:
    async with httpx.AsyncClient(timeout=30) as http:
        org = await new_org(live, http)
        await live.app.state.runtime.subscriptions.ensure(org.id)  # its events reach timebot
        yield org


@pytest.fixture
def operations(live: LiveServer) -> Iterator[list[str]]:
    """The names of the reply's and the owner's notice's GraphQL operations sent to the
    service meanwhile (a read alone in its batch keeps its own name)."""
    client = live.app.state.runtime.client
    sent: list[str] = []
    original = client.execute_raw

    async def execute_raw(query: Any, variables: Any = None, *, apikey: str) -> Any:
        text = query if isinstance(query, str) else print_ast(query.document)
        found = re.search(r"^\s*(?:query|mutation)\s+(Reply\w+|NoticeOwner)\b", text)
        if found:
            sent.append(found.group(1))
        return await original(query, variables, apikey=apikey)

    client.execute_raw = execute_raw
    try:
        yield sent
    finally:
        del client.execute_raw


async def _reply(live: LiveServer, sheet: Sheet, body: str, *, token: str | None = None,
                 in_reply_to: str | None = None) -> InboxMessage:
    """The approver's signed reply, through the inbox, processed."""
    token = token or make_token(live.settings.secret_key, "reply", event_id=sheet.event_id,
                                approver_id=sheet.approver.id, stage=0,
                                expires_at_ms=live.clock.now_ms() + DAY_MS)
    raw = reply(sheet.approver.email, token, body, sign_with=KEY, in_reply_to=in_reply_to)
    runtime = live.app.state.runtime
    mail = live.app.state.mail
    assert await mail.inbox.accept(raw, sheet.approver.email, [reply_address(token, DOMAIN)],
                                   "smtp")
    mail.wake_inbox()
    for _ in range(400):
        async with runtime.state_sessions() as session:
            row = await session.scalar(
                select(InboxMessage).where(InboxMessage.message_key == message_key(raw)))
        if row is not None and row.status in ("done", "failed"):
            return row  # type: ignore[no-any-return]
        await asyncio.sleep(0.05)
    raise AssertionError("the reply was not processed")


async def _owner_notices(live: LiveServer, email: str) -> list[OutboxMessage]:
    for _ in range(400):
        rows = await live.app.state.mail.outbox.messages("owner-notice")
        mine = [row for row in rows if email in row.rcpt_tos]
        if mine:
            return mine
        await asyncio.sleep(0.05)
    raise AssertionError("no owner's notice")


async def _decision_event(live: LiveServer, org: Org, submit_id: str) -> ServiceEvent:
    async with live.app.state.runtime.state_sessions() as session:
        rows = list(await session.scalars(select(ReceivedEvent).where(
            ReceivedEvent.organisation_id == org.id)))
    [row] = [row for row in rows
             if row.data.get("submitId") == submit_id and row.data.get("status") == "a"]
    return ServiceEvent(row.delivery_id, row.event, row.organisation_id, row.timestamp_ms,
                        dict(row.data))


async def test_the_owners_notice_after_an_approval_by_reply_reads_nothing_more(
    live: LiveServer, org: Org, operations: list[str]
) -> None:
    runtime = live.app.state.runtime
    # Whatever the machine's load: the notice comes well within this of the reply's read.
    runtime.directory._recent_details.ttl_s = 600.0
    sheet, _ = await submitted_sheet(org)
    row = await _reply(live, sheet, "Approved, thanks")
    assert row.outcome is not None and row.outcome.startswith("approved"), row.outcome
    [notice] = await _owner_notices(live, sheet.owner.email)
    assert "is approved" in notice.subject
    # The event and the state (one each: a reply alone is alone in its batches), the approval.
    assert sorted(operations) == ["ReplyApprove", "ReplyEventAndLanguage", "ReplyState"]

    # The same event dispatched again (a retry, a second process): one statement, the
    # outbox's INSERT that finds the notice there; no read of the owner.
    notices = OwnerNotices(component_of(runtime).ctx)
    decision = await _decision_event(live, org, sheet.event_id)
    this_task = asyncio.current_task()
    statements: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if asyncio.current_task() is this_task and not statement.startswith("BEGIN"):
            statements.append(" ".join(statement.split())[:60])

    engine = runtime.state_engine.sync_engine
    event.listen(engine, "before_cursor_execute", count)
    try:
        assert await notices.handle(decision) is False
    finally:
        event.remove(engine, "before_cursor_execute", count)
    assert [s.split(" (")[0] for s in statements] == ["INSERT INTO outbox_messages"], statements
    assert sorted(operations) == ["ReplyApprove", "ReplyEventAndLanguage", "ReplyState"]

    # Without the reply's read at hand (another process got the event), getPerson.
    runtime.directory._recent_details.forget(sheet.owner.id)
    assert await notices.handle(decision) is False
    assert operations.count("NoticeOwner") == 1
    assert len(await _owner_notices(live, sheet.owner.email)) == 1


async def test_a_comment_reads_no_approval_state(
    live: LiveServer, org: Org, operations: list[str]
) -> None:
    sheet, _ = await submitted_sheet(org)
    row = await _reply(live, sheet, "Could you add the client call on Tuesday?")
    assert row.outcome is not None and row.outcome.startswith("comment"), row.outcome
    assert sorted(operations) == ["ReplyComment", "ReplyEventAndLanguage"]


async def test_an_approval_with_words_is_one_request_and_reaches_the_journal(
    live: LiveServer, org: Org, operations: list[str]
) -> None:
    # The reply's requests: the event with the approver's language, the state, and the
    # approval with its Journal message together (both in place, or neither).
    sheet, _ = await submitted_sheet(org)
    row = await _reply(live, sheet, "Approved\n\nThe client call is on Tuesday, fine.")
    assert row.outcome is not None and row.outcome.startswith("approved"), row.outcome
    assert sorted(operations) == [
        "ReplyApproveWithMessage", "ReplyEventAndLanguage", "ReplyState"]
    journal = await org.admin.gql(
        "query($r: SvcReferenceInput!) { getMessages(of: $r) { content type author { id } } }",
        {"r": {"id": sheet.event_id, "type": "approvalEvent"}})
    assert [(m["content"], m["author"]["id"]) for m in journal["getMessages"]
            if m["type"] == "message"] == [
        ("The client call is on Tuesday, fine.", sheet.approver.id)]
    state = await org.admin.gql(
        "query($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { getApprovalState("
        "personId: $p, startTime: $s, endTime: $e) { status } }",
        {"p": sheet.owner.id, "s": WEEK, "e": WEEK_END})
    assert state["getApprovalState"]["status"] == "a"


async def _review_request(live: LiveServer, sheet: Sheet) -> tuple[str, str]:
    """The review request's Message-ID and the reply token it carries."""
    for _ in range(400):
        rows = await live.app.state.mail.outbox.messages("review")
        mine = [row for row in rows if sheet.approver.email in row.rcpt_tos]
        if mine:
            message_id = str(mine[-1].message_id)
            return message_id, message_id.strip("<>").split(".", 1)[0]
        await asyncio.sleep(0.05)
    raise AssertionError("no review request")


async def test_a_reply_to_the_review_mail_reads_the_state_with_the_event(
    live: LiveServer, org: Org, operations: list[str]
) -> None:
    """The review request's Message-ID carries the timesheet's owner and period: a reply to
    it (In-Reply-To) reads the event, the approver's language and the approval state in one
    request."""
    sheet, _ = await submitted_sheet(org)
    review_id, token = await _review_request(live, sheet)
    assert period_hint([("In-Reply-To", review_id)], token, DOMAIN) == PeriodHint(
        sheet.owner.id, WEEK, WEEK_END)
    row = await _reply(live, sheet, "approve", token=token, in_reply_to=review_id)
    assert row.outcome is not None and row.outcome.startswith("approved"), row.outcome
    assert sorted(operations) == ["ReplyApprove", "ReplyEventLanguageAndState"]


@pytest.mark.parametrize("forged", ["another period", "another person"])
async def test_a_hint_the_event_does_not_bear_out_is_not_used(
    live: LiveServer, org: Org, operations: list[str], forged: str
) -> None:
    """A hint is never trusted: one naming another period of the owner (its state is read,
    and not used), or a person who is not there (the read fails, and is made again without
    it), leaves the reply deciding on the event's own state."""
    sheet, _ = await submitted_sheet(org)
    _review_id, token = await _review_request(live, sheet)
    week = 7 * DAY_MS
    hint = (PeriodHint(sheet.owner.id, WEEK + week, WEEK_END + week) if forged == "another period"
            else PeriodHint("f" * 24, WEEK, WEEK_END))
    row = await _reply(live, sheet, "approve", token=token,
                       in_reply_to=message_id(token, DOMAIN, hint=hint))
    assert row.outcome is not None and row.outcome.startswith("approved"), row.outcome
    assert "ReplyEventLanguageAndState" in operations and "ReplyState" in operations
    assert operations.count("ReplyApprove") == 1
