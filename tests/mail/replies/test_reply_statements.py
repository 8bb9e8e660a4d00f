"""What one approval reply asks of the databases, counted (issue #26): its reply token's event,
the approver's language and the approval state, the intent, the approval with its records, the
receipt and the inbox row marked done take at most REPLY_STATEMENTS SQL statements on either
database, and exactly as many for every reply while the owner's timesheets accumulate (a read
again per timesheet, or per approver, would show).

Counted as tests/mail/replies/reply_cost.py counts them (statements of the reply's task and of what
it schedules, the read batcher's request; not of the pollers), with the clock frozen so that no
cache lets go between two replies. A count, not a time: the same on any machine."""

from __future__ import annotations

import os

import httpx
import pytest

from bench.reply_mail import GMAIL, ONE_LINE
from mail.queues.inbox import Inbox, InboxWorker
from tests.mail.replies.reply_cost import _one_reply
from tests.mail.replies.test_reply_commits import LEASE_MS, live  # noqa: F401 (the module's server)
from tests.protocol.reply_helpers import Sheet, submitted_sheet
from tests.service.test_approvals_support import SUBMIT, WEEK, add_record
from tests.support import DAY_MS, LiveServer, new_org

# PostgreSQL's two more: the advisory lock that serialises claims of a laned queue, and the
# row lock on the submission (SQLite's BEGIN IMMEDIATE does both). A reply as mail clients
# write it (bench.reply_mail: a comment under "Approved", a signature, the review quoted)
# adds its Journal message to the approval's request: the message and its audit row, each
# field in a savepoint (the approval's event, timesheet and webhooks not read again). The
# organisation is subscribed, as a server subscribes each it serves: the approval's event is
# queued for timebot's webhook (one INSERT); the comment's journalMessage is not, in a
# deployment that does not mirror the Journal in a chat (#40: subscribed to "*", a GMAIL reply
# took one statement more in its own task, and a second delivery, stored and dispatched to
# nobody, after it).
REPLY_STATEMENTS = {
    ONE_LINE: {"sqlite": 22, "postgresql": 24},
    GMAIL: {"sqlite": 28, "postgresql": 30},
}
REPLIES = 4


@pytest.mark.parametrize("style", [ONE_LINE, GMAIL])
async def test_a_reply_takes_the_same_few_statements_whatever_the_owners_history(
    live: LiveServer,  # noqa: F811 (the fixture)
    style: str,
) -> None:
    assert os.environ.get("REPLY_COST_HINT", "1") != "0"  # replies carry the period hint
    inbound = live.app.state.mail.wake_inbox.__self__
    inbox: Inbox = live.app.state.mail.inbox
    worker = InboxWorker(inbox, inbound.workers[0].processor, lease_ms=LEASE_MS)
    live.clock.set(live.clock.now_ms())
    directory = live.app.state.runtime.directory
    recent = (directory._recent_people, directory._recent_keys, directory._recent_details)
    for cache in recent:  # its look-ups are kept 10 s of the monotonic clock, not ours
        cache.ttl_s = 3600.0
    try:
        async with httpx.AsyncClient(timeout=30) as http:
            org = await new_org(live, http)
            # Subscribed as a running server subscribes every organisation it serves: the
            # reply's events are queued for timebot's webhook, those it handles only (#40).
            await live.app.state.runtime.subscriptions.ensure(org.id)
            first, _ = await submitted_sheet(org)
            # warms the caches and prepared documents
            await _one_reply(live, worker, first, style=style)
            owner = first.owner
            counted: list[list[str]] = []
            for week in range(1, REPLIES + 2):
                start = WEEK + week * 7 * DAY_MS
                await add_record(owner, owner, day=week * 7 + 1, hours=8)
                submitted = (await owner.gql(SUBMIT, {"p": owner.id, "s": start,
                                                      "e": start + 7 * DAY_MS}))
                sheet = Sheet(first.org, owner, first.approver,
                              submitted["submitTimesheet"]["submitId"]
                              or submitted["submitTimesheet"]["id"])
                counted.append((await _one_reply(live, worker, sheet, start, style)).statements)
    finally:
        live.clock.frozen_ms = None
        for cache in recent:
            cache.ttl_s = directory.LOOKUP_TTL_S
    # The warm reply provisioned the approver's key, and storing a link forgets the person's
    # directory entry: the next reply reads it once more — unless the warm reply's event,
    # dispatched at once (an interactive one), read it first. The steady state is from the
    # one after.
    first, counted = counted[0], counted[1:]
    sizes = [len(statements) for statements in counted]
    assert sizes == [sizes[0]] * REPLIES, "\n\n".join("\n".join(s) for s in counted)
    links = sum(s.startswith("SELECT person_links") for s in first)
    assert (len(first) - sizes[0], links) in ((0, 0), (1, 1)), "\n".join(first)
    assert sizes[0] <= REPLY_STATEMENTS[style][live.backend], "\n".join(counted[0])
    assert any(s.startswith("UPDATE timesheets") for s in counted[0])  # the approval counted
    assert any(s.startswith("INSERT INTO outbox_messages") for s in counted[0])  # the receipt
    deliveries = sum(s.startswith("INSERT INTO webhook_deliveries") for s in counted[0])
    assert deliveries == 1  # the approval's event; not the comment's (#40)
    messages = sum(s.startswith("INSERT INTO journal_messages") for s in counted[0])
    assert messages == (2 if style == GMAIL else 1)  # the approval's entry, and the comment
