"""A reminder run writes in short batches and holds the write lock only to write (issue #40:
the Monday reminder run beside interactive writers). Counted, not timed: the transactions of
the bot's write engine (on SQLite each one a BEGIN IMMEDIATE: the database's write lock)
during one run for PEOPLE people due a reminder; every one reminded once; a second run writes
no mail. (Between two batches the run yields: mail.queues.outbox_batch.)"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.ext.asyncio import AsyncEngine

from mail.queues.outbox_batch import BATCH_ROWS
from tests.mail.reviews_support import WEEK_END, jobs, mails, runtime_of
from tests.statement_counter import listening, statements
from tests.support import DAY_MS, Org

PEOPLE = 6


@contextmanager
def transactions(*engines: AsyncEngine) -> Iterator[list[int]]:
    """The transactions the calling task begins on `engines`, counted (the run's, not the
    outbox worker's beside it)."""
    begun: list[int] = []
    with listening(engines, "begin", lambda _connection: begun.append(1), this_task_only=True):
        yield begun


async def test_a_reminder_run_takes_the_write_lock_once_a_batch(org: Org) -> None:
    runtime = runtime_of(org)
    scheduler = jobs(org).scheduler
    people = [await org.add_member(f"Rita Run{index}") for index in range(PEOPLE)]
    runtime.clock.set(WEEK_END)  # Monday 00:00 UTC: everyone's empty week is due
    with transactions(runtime.state_engine) as begun:
        assert await scheduler.period_reminders(org.id) == PEOPLE + 1  # and the admin
    for person in people:
        assert len(await mails(runtime, person, "timesheet-reminder")) == 1
    # The organisation's epoch once, and the reminders' mails BATCH_ROWS a transaction; each
    # one's "queued before?" look-up is a read, beside the writers (SQLite: the read engine's
    # deferred BEGIN), not a BEGIN IMMEDIATE behind them (before #40: 2 a reminder, 2N + 1).
    batches = -(-(PEOPLE + 1) // BATCH_ROWS)
    if org.live.backend == "sqlite":
        assert len(begun) == 1 + batches, len(begun)
    with transactions(runtime.state_engine) as again:
        assert await scheduler.period_reminders(org.id) == 0
    if org.live.backend == "sqlite":
        assert len(again) == 1, len(again)  # the epoch's


async def test_a_reminder_run_asks_the_service_once_a_page(org: Org) -> None:
    """What a run asks the service, counted as the service's transactions (one a GraphQL
    request) begun by the run: the people (their ids, then a page of them), their approval
    states, and for the page's people due a reminder the verdicts' reads (working days and the
    period's records) with the mails' (notification settings and suggested time), one request.
    Before: one a reminder (timebot.notify.reminder_reads.verdict_reads), two before that (the
    mail's apart), four before that: 31 for this run."""
    runtime = runtime_of(org)
    scheduler = jobs(org).scheduler
    for index in range(PEOPLE):
        await org.add_member(f"Asa Ask{index}")
    runtime.clock.set(WEEK_END)
    await scheduler.period_reminders(org.id)  # the client's one-time look at the schema
    runtime.clock.set(WEEK_END + 7 * DAY_MS)  # the next week is due for everyone
    service = org.live.service
    with transactions(service.engine, service.read_engine) as begun:
        assert await scheduler.period_reminders(org.id) == PEOPLE + 1  # and the admin
    assert len(begun) == 4, len(begun)


async def test_a_reminder_run_asks_what_was_sent_once_a_page(org: Org) -> None:
    """Whether each due reminder was queued before is one read for the page of people (a
    round trip a reminder before), on the first run and on the second, which finds them all
    sent and queues none."""
    runtime = runtime_of(org)
    scheduler = jobs(org).scheduler
    for index in range(PEOPLE):
        await org.add_member(f"Pia Page{index}")
    runtime.clock.set(WEEK_END)
    engines = [e for e in (runtime.state_engine, runtime.read_engine) if e is not None]
    for expected in (PEOPLE + 1, 0):  # and the admin
        async with statements(engines, this_task_only=True) as seen:
            assert await scheduler.period_reminders(org.id) == expected
        looked_up = [sql for sql in seen.lines(400) if "FROM outbox_messages" in sql
                     and "dedupe_key" in sql and sql.startswith("SELECT")]
        assert len(looked_up) == 1 and " IN " in looked_up[0], looked_up
