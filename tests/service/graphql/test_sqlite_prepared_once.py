"""On SQLite a service request's statements are prepared once and run many times: none is
prepared again at each run because a bound value is compared with the column of a partial
index's WHERE (plumbing.sql_constants). The key lookup that begins every request was, ten
times the cost of its run. Counted by SQLite itself (tests/sqlite_repreparations.py)."""

from __future__ import annotations

import pytest

from service.timesheets.reminders import approval_reminders
from tests.service import test_approvals_support as approvals
from tests.sqlite_repreparations import available, sqlite_repreparations
from tests.support import Org

READS = (
    "query($p: [SvcId], $s: SvcTimestamp!, $e: SvcTimestamp!) { "
    "getTimeRecords(startTime: $s, endTime: $e, filter: [{personIds: $p, status: \"s\"}]) "
    "{ id duration } "
    "getPendingApprovals { submitId person { id name } totalDuration } }"
)


async def test_requests_are_not_prepared_again_at_each_run(org: Org) -> None:
    service = org.live.service
    if service.engine.dialect.name != "sqlite":
        pytest.skip("SQLite's preparation (PostgreSQL plans its own way)")
    if not available():
        pytest.skip("SQLite's sqlite_stmt table (SQLITE_ENABLE_STMTVTAB) is not built in here")
    mia = await org.add_member("Mia", role="manager")
    max_ = await org.add_member("Max", role="manager")
    team = [await org.add_member(f"Team {n}") for n in range(2)]
    for member in team:
        await approvals.manage(org, mia, member)
        await approvals.manage(org, max_, member)
    await approvals.set_stages(org, [{"type": "ppm", "quorum": "any"}])
    for member in team:
        await approvals.add_record(member, member, day=1)
        await approvals.submit(member, member)
    week = {"s": approvals.WEEK, "e": approvals.WEEK_END}
    payload = {"query": READS, "variables": {"p": [m.id for m in team], **week}}
    now_ms = org.live.clock.now_ms()
    for approver in (mia, max_):  # parsed, planned, the connections' statements prepared
        await service.executor.run(payload, approver.apikey)
    await approval_reminders(service.sessions, now_ms)

    async with sqlite_repreparations([service.engine, service.read_engine]) as prepared:
        for approver in (mia, max_, mia, max_):  # each run binds other values
            response = await service.executor.run(payload, approver.apikey)
            data = response.body["data"]
            assert len(data["getTimeRecords"]) == 2 and len(data["getPendingApprovals"]) == 2
        await approval_reminders(service.sessions, now_ms)
        await approval_reminders(service.sessions, now_ms + 1)
    assert not prepared, +prepared.by_statement
