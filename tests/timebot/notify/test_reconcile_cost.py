"""The reconciler's pass costs what the organisation's pending work costs once, not per item
(issue #26): what was sent is read for all the pending timesheets at once, in a bounded number
of statements (a few per 500 review requests), each a seek on an index, so neither the number of
pending timesheets nor the outbox's size grows it. A pass used to run 3-4 statements per
timesheet and approver, one of them a prefix search that read the whole outbox whenever a
review had not been mailed (every timesheet of an organisation, at start-up, or every pass for
an approver who reads the daily digest). Counted deterministically: statements (this task's,
on timebot's state database), and on SQLite its virtual machine steps (the progress handler)."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest

from tests.mail.reviews_support import add_record, outbox_rows, set_stages, submit, wait_for
from tests.sqlite_steps import sqlite_steps
from tests.statement_counter import Statements, statements
from tests.support import Member, Org, new_org
from tests.timebot.notify.test_reconcile import runtime_of
from timebot.notify.approvals import DIGEST, set_preference
from timebot.notify.reconcile import Reconciler
from timebot.process.runtime import Runtime


async def _steps_of_checks(runtime: Runtime, org_id: str, submit_id: str, mailed: Member,
                           not_yet: Member) -> int:
    """The steps of checking the first stage's request (mailed) and the second's (not yet: the
    first has not approved); the fewer of two runs (a connection new to the pool reads the
    schema first)."""
    engine = runtime.read_sessions.kw["bind"]
    counts = []
    for _ in range(2):
        async with sqlite_steps([engine]) as steps:
            reconciler = Reconciler(runtime)
            assert await reconciler.requested_before(org_id, submit_id, 0, mailed.id)
            assert not await reconciler.requested_before(org_id, submit_id, 1, not_yet.id)
        counts.append(steps.count)
    return min(counts)


async def _submitted(org: Org, runtime: Runtime, first: int, count: int, approver: Any
                     ) -> list[str]:
    ids = []
    for n in range(first, first + count):
        owner = await org.add_member(f"Owner {n}")
        await add_record(owner)
        ids.append(str((await submit(owner))["submitId"] or ""))
    await wait_for(lambda: _at_least(outbox_rows(runtime, approver.email, "review"),
                                     first + count), what="the review mails", seconds=120)
    return ids


async def _at_least(rows: Any, count: int) -> bool:
    return len(await rows) >= count


async def test_checking_one_review_request_costs_the_same_with_a_fuller_outbox(
    org: Org,
) -> None:
    runtime = runtime_of(org.live)
    if runtime.read_sessions.kw["bind"].dialect.name != "sqlite":
        pytest.skip("SQLite's VM steps (the same statements run on PostgreSQL)")
    first_stage = await org.add_member("Abe Approver", "manager")
    second_stage = await org.add_member("Bea Approver", "manager")
    await set_stages(org, (first_stage,), (second_stage,))
    await runtime.subscriptions.ensure(org.id)
    # Each checked submission has a later one (ids grow with time): every seek lands before a
    # key at both counts.
    [first, _second] = await _submitted(org, runtime, 0, 2, first_stage)
    before = await _steps_of_checks(runtime, org.id, first, first_stage, second_stage)
    *_others, checked, _last = await _submitted(org, runtime, 2, 15, first_stage)
    after = await _steps_of_checks(runtime, org.id, checked, first_stage, second_stage)
    assert before > 0
    assert after == before, (before, after)


def _statements(runtime: Runtime) -> AbstractAsyncContextManager[Statements]:
    """Counts the statements this task runs on timebot's state database while the block runs
    (the live server's workers run theirs meanwhile, in other tasks)."""
    engines = [runtime.read_sessions.kw["bind"], runtime.state_sessions.kw["bind"]]
    return statements(engines, this_task_only=True)


async def _pass_sending_nothing(runtime: Runtime, org_id: str, cost: Any) -> int:
    """What one pass (a fresh reconciler's: nothing remembered) costs by `cost`; every request
    is found sent, so the pass writes nothing."""
    async with cost as measured:
        emitted = await Reconciler(runtime).reconcile_organisation(org_id)
    assert emitted == 0
    return int(measured.count)


async def _digest_reader(org: Org, runtime: Runtime, name: str) -> Member:
    """An approver who reads the daily digest: never mailed a review, so every pass misses
    their requests in the outbox and reads their preference (the old pass also searched the
    outbox for a restarted round's mail of each)."""
    reader = await org.add_member(name, "manager")
    await set_preference(runtime, org.id, reader.id, DIGEST)
    return reader


async def test_a_pass_runs_as_many_statements_for_50_pending_timesheets_as_for_5(
    org: Org,
) -> None:
    runtime = runtime_of(org.live)
    mailed = await org.add_member("Abe Approver", "manager")
    digest = await _digest_reader(org, runtime, "Dee Digest")
    await set_stages(org, (mailed, digest))
    await runtime.subscriptions.ensure(org.id)
    await _submitted(org, runtime, 0, 5, mailed)
    five = await _pass_sending_nothing(runtime, org.id, _statements(runtime))
    await _submitted(org, runtime, 5, 45, mailed)
    fifty = await _pass_sending_nothing(runtime, org.id, _statements(runtime))
    assert five > 0
    assert fifty == five, (five, fifty)


async def _steps_of_pass(runtime: Runtime, org_id: str) -> int:
    """The fewer steps of two passes: a connection new to the pool reads the schema first."""
    engine = runtime.read_sessions.kw["bind"]
    return min([await _pass_sending_nothing(runtime, org_id, sqlite_steps([engine]))
                for _ in range(2)])


async def test_a_pass_with_no_review_mailed_costs_the_same_with_a_fuller_outbox(
    org: Org,
) -> None:
    runtime = runtime_of(org.live)
    if runtime.read_sessions.kw["bind"].dialect.name != "sqlite":
        pytest.skip("SQLite's VM steps (the same statements run on PostgreSQL)")
    digest = await _digest_reader(org, runtime, "Dee Digest")
    await set_stages(org, (digest,))
    await runtime.subscriptions.ensure(org.id)
    for n in range(3):
        owner = await org.add_member(f"Owner {n}")
        await add_record(owner)
        await submit(owner)
    # Another organisation's reviews fill the outbox, their keys after these (ids grow with
    # time): one before the first count, so that each seek lands before a key at both counts.
    other = await new_org(org.live, org.http)
    approver = await other.add_member("Abe Approver", "manager")
    await set_stages(other, (approver,))
    await runtime.subscriptions.ensure(other.id)
    await _submitted(other, runtime, 0, 1, approver)
    before = await _steps_of_pass(runtime, org.id)
    await _submitted(other, runtime, 1, 20, approver)
    after = await _steps_of_pass(runtime, org.id)
    assert before > 0
    assert after == before, (before, after)
