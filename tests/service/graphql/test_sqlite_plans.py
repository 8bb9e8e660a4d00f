"""On SQLite an approver's reads cost the same in a small and a large organisation: the
planner is told (service/db.py) that the indexes led by `organisation_id` are unselective, so
it seeks the approver's team by manager and the people by id instead of reading every row of
the organisation (issue #26: the Slack Home cost twice as much at 1,000 people as at 100 with
the same statements and rows). Counted deterministically: SQLite's virtual machine steps
(its progress handler, every instruction) of one request, in two organisations of one
database."""

from __future__ import annotations

import pytest

from tests.service.test_approvals_support import (
    WEEK,
    WEEK_END,
    add_record,
    manage,
    set_stages,
    submit,
)
from tests.sqlite_steps import sqlite_steps
from tests.support import Org, new_org

APPROVER_READS = (
    "query($p: [SvcId], $s: SvcTimestamp!, $e: SvcTimestamp!) { "
    "getTimeRecords(startTime: $s, endTime: $e, filter: [{personIds: $p}]) { id duration } "
    "getPendingApprovals { submitId person { id name } totalDuration } }"
)


async def _steps(org: Org, others: int) -> int:
    """SQLite VM steps of the approver's reads, Mia's team of three having submitted, in `org`
    grown by `others` more people managed by someone else."""
    mia = await org.add_member("Mia", role="manager")
    team = [await org.add_member(f"Team {n}") for n in range(3)]
    boss = await org.add_member("Boss", role="manager")
    for member in team:
        await manage(org, mia, member)
    for n in range(others):
        await manage(org, boss, await org.add_member(f"Other {n}"))
    await set_stages(org, [{"type": "ppm", "quorum": "any"}])
    for member in team:
        await add_record(member, member, day=1)
        await submit(member, member)
    service = org.live.service
    payload = {"query": APPROVER_READS,
               "variables": {"p": [m.id for m in team], "s": WEEK, "e": WEEK_END}}
    await service.executor.run(payload, mia.apikey)  # parsed, connections open
    async with sqlite_steps([service.engine, service.read_engine]) as steps:
        response = await service.executor.run(payload, mia.apikey)
    data = response.body["data"]
    assert len(data["getTimeRecords"]) == 3 and len(data["getPendingApprovals"]) == 3, data
    return steps.count


async def test_an_approvers_reads_take_the_same_sqlite_steps_in_a_large_organisation(
    org: Org,
) -> None:
    if org.live.service.engine.dialect.name != "sqlite":
        pytest.skip("SQLite's planner statistics (PostgreSQL keeps its own)")
    small = await _steps(org, 2)
    large = await _steps(await new_org(org.live, org.http, "Large"), 60)
    assert small > 0
    assert large == small, (small, large)
