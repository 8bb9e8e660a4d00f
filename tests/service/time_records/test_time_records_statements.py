"""How many SQL statements one addTimeRecord runs (issue #18), pinned on both databases so
that a change that adds a round trip to the path is a decision, not an accident."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import event

from tests.service.time_records.test_time_records import MONDAY, make_world, tag_person
from tests.support import HOUR_MS, Member, Org

ADD = """mutation($start: SvcTimestamp!, $person: SvcId!, $projects: [SvcId]) {
  addTimeRecord(startTime: $start, duration: 3600000, personId: $person,
                projectIds: $projects) { id }
}"""

# The key with its organisation and person (and whether the person carries a tag: Eve
# carries none, so nothing reads her tags); the named projects with their parents and their
# "who has access" lists; the timesheet covering the record (the approval workflow); the
# record, its project link and the audit row.
STATEMENTS_PER_ADD = 6


async def statements_of_an_add(org: Org, member: Member, project_id: str) -> list[str]:
    """The statements of one addTimeRecord of the member's own (the second: the first request
    of a document parses it and checks the key once more)."""
    service = org.live.service
    this_task = asyncio.current_task()
    seen: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        # Only this request's statements (not the background workers'); the transaction's
        # BEGIN is a statement on SQLite only.
        if asyncio.current_task() is this_task and not statement.startswith("BEGIN"):
            seen.append(" ".join(statement.split())[:80])

    async def add(hour: int) -> None:
        variables = {"start": MONDAY + hour * HOUR_MS, "person": member.id,
                     "projects": [project_id]}
        response = await service.executor.run({"query": ADD, "variables": variables},
                                               member.apikey)
        assert response.body.get("data", {}).get("addTimeRecord"), response.body

    await add(0)
    event.listen(service.engine.sync_engine, "before_cursor_execute", count)
    try:
        await add(1)
    finally:
        event.remove(service.engine.sync_engine, "before_cursor_execute", count)
    return seen


async def test_one_add_runs_a_fixed_number_of_statements(org: Org) -> None:
    world = await make_world(org)
    member = await org.add_member("Eve", "employee")
    seen = await statements_of_an_add(org, member, world.child)
    assert len(seen) == STATEMENTS_PER_ADD, "\n".join(seen)


async def test_a_tagged_person_s_add_reads_their_tags_once(org: Org) -> None:
    """Their tags may grant access or carry settings (here: the schedule's), so they are read,
    once."""
    world = await make_world(org)
    member = await org.add_member("Eve", "employee")
    await tag_person(org, world.subtag, member)
    seen = await statements_of_an_add(org, member, world.child)
    assert len(seen) == STATEMENTS_PER_ADD + 1, "\n".join(seen)
    assert sum(statement.startswith("SELECT tags.id") for statement in seen) == 1, "\n".join(seen)


async def test_an_administrator_s_add_reads_no_timesheet(org: Org) -> None:
    """An administrator may edit any timesheet in any status: the approval workflow's guard
    has nothing to read."""
    world = await make_world(org)
    admin = await org.add_member("Ada", "admin")
    seen = await statements_of_an_add(org, admin, world.child)
    assert len(seen) == STATEMENTS_PER_ADD - 1, "\n".join(seen)
    assert not any("timesheets" in statement for statement in seen), "\n".join(seen)
