"""The reconciler's check of one review request ("was it mailed?") costs the same however many
mails the outbox holds: the request's own key is looked up first, through its unique index;
only a missing one is searched by prefix (the restarted rounds' keys). A pass over an
organisation's pending work checked every timesheet with a prefix search that read the whole
outbox (issue #26: quadratic in the organisation's size, every three minutes). Counted
deterministically on SQLite: its virtual machine steps (the progress handler)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.mail.reviews_support import add_record, outbox_rows, set_stages, submit, wait_for
from tests.sqlite_steps import sqlite_steps
from tests.support import Org
from tests.timebot.test_reconcile import runtime_of
from timebot.reconcile import Reconciler
from timebot.runtime import Runtime


async def _steps_of_check(runtime: Runtime, org_id: str, submit_id: str, approver: str) -> int:
    engine = runtime.read_sessions.kw["bind"]
    async with sqlite_steps([engine]) as steps:
        sent = await Reconciler(runtime).requested_before(org_id, submit_id, 0, approver)
    assert sent, "the review was mailed"
    return steps.count


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
    approver = await org.add_member("Abe Approver", "manager")
    await set_stages(org, (approver,))
    await runtime.subscriptions.ensure(org.id)
    [first] = await _submitted(org, runtime, 0, 1, approver)
    before = await _steps_of_check(runtime, org.id, first, approver.id)
    *_others, last = await _submitted(org, runtime, 1, 15, approver)
    # The last mailed (a search through the outbox would find it last).
    after = await _steps_of_check(runtime, org.id, last, approver.id)
    assert before > 0
    assert after == before, (before, after)
