"""How many SQL statements one approveTimesheet runs (the mail reply path's approval), pinned
on both databases so that a change that adds a round trip to it is a decision, not an
accident."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import event

from tests.service.test_approvals_support import add_record, manage, set_stages, submit
from tests.support import Org

APPROVE = "mutation($id: SvcId!) { approveTimesheet(id: $id) { id status stage } }"

# The key with its organisation and person; the submit event with its timesheet (on
# PostgreSQL locked first: approvals/locks.py); the approval; the journal message and its
# mention; the active webhooks; the approved event, the submit event's and the timesheet's
# new status; the audit row.
STATEMENTS_PER_APPROVAL = {"sqlite": 10, "postgresql": 11}


async def test_one_approval_runs_a_fixed_number_of_statements(org: Org) -> None:
    bob = await org.add_member("Bob")
    mia = await org.add_member("Mia", role="manager")
    await manage(org, mia, bob)
    await set_stages(org, [{"type": "ppm", "quorum": "any"}])
    await add_record(bob, bob, day=0)
    await add_record(bob, bob, day=1)
    submit_id = (await submit(bob, bob))["id"]
    service = org.live.service
    await service.executor.documents.prepare(APPROVE)  # parsed before: one key lookup
    this_task = asyncio.current_task()
    seen: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if asyncio.current_task() is this_task and not statement.startswith("BEGIN"):
            seen.append(" ".join(statement.split())[:100])

    event.listen(service.engine.sync_engine, "before_cursor_execute", count)
    try:
        response = await service.executor.run(
            {"query": APPROVE, "variables": {"id": submit_id}}, mia.apikey
        )
    finally:
        event.remove(service.engine.sync_engine, "before_cursor_execute", count)
    assert response.body["data"]["approveTimesheet"]["status"] == "a", response.body
    backend = service.engine.dialect.name
    assert len(seen) == STATEMENTS_PER_APPROVAL[backend], "\n".join(seen)
