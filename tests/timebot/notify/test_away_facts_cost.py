"""An approver's facts of absence (read for every review request: `away_facts`) cost the same
however many other approvers of the organisation have an absence recorded (issue #26: the
review fan-out's cost per person flat as the organisation grows). They were read for the
whole organisation each time. Counted deterministically on SQLite: its virtual machine
steps on timebot's own database."""

from __future__ import annotations

from datetime import date

import pytest

from tests.sqlite_steps import sqlite_steps
from tests.support import Org
from tests.timebot.notify.test_reconcile import runtime_of
from timebot.notify.away_facts import away_facts
from timebot.process.runtime import Runtime
from timebot.state.away import record_absence


async def _recorded(runtime: Runtime, org_id: str, approver_ids: list[str]) -> None:
    for n, approver_id in enumerate(approver_ids):
        await record_absence(runtime.state_sessions, organisation_id=org_id,
                             approver_id=approver_id, until=date(2026, 12, 24),
                             seen_ms=1_000 + n, message_key=f"<away-{approver_id}@test>")


async def _steps_of_facts(runtime: Runtime, org_id: str, approver_id: str) -> int:
    key = await runtime.directory.integration_key(org_id)
    engine = runtime.read_sessions.kw["bind"]
    async with sqlite_steps([engine]) as steps:
        facts = await away_facts(runtime, key, org_id, [approver_id])
    assert [a.source for a in facts[approver_id]] == ["auto-reply"], facts
    return steps.count


async def test_an_approvers_absences_cost_the_same_with_more_absent_colleagues(
    org: Org,
) -> None:
    runtime = runtime_of(org.live)
    if runtime.read_sessions.kw["bind"].dialect.name != "sqlite":
        pytest.skip("SQLite's VM steps (the same statement runs on PostgreSQL)")
    approver = await org.add_member("Abe Approver", "manager")
    await _recorded(runtime, org.id, [approver.id, "colleague-0"])
    before = await _steps_of_facts(runtime, org.id, approver.id)
    await _recorded(runtime, org.id, [f"colleague-{n}" for n in range(1, 60)])
    after = await _steps_of_facts(runtime, org.id, approver.id)
    assert before > 0
    assert after == before, (before, after)
