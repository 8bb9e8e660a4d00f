"""A submission reads the same rows in an organisation of a few people and of many: the stage
resolution looks up who of the candidate approvers is active, never every person of the
organisation (issue #26: the seed of 10,000 people spent most of a submission reading 10,000
person ids). Rows are counted as the database driver hands them over, on both databases."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import event

from tests.service.test_approvals_support import (
    STATE,
    SUBMIT,
    WEEK,
    WEEK_END,
    add_record,
    manage,
    set_stages,
)
from tests.support import Org, new_org

ARCHIVE = "mutation($id: SvcId!) { archivePerson(id: $id) { archived } }"


async def _rows_of_one_submit(org: Org, colleagues: int) -> tuple[int, list[str]]:
    """The rows one submitTimesheet reads, and its approvers, in `org` grown by `colleagues`
    more people (each managed by the approver, as in a team-per-manager organisation)."""
    mia = await org.add_member("Mia", role="manager")
    gone = await org.add_member("Gus", role="manager")  # a manager archived since
    bob = await org.add_member("Bob")
    for member in (bob, *[await org.add_member(f"Colleague {n}") for n in range(colleagues)]):
        await manage(org, mia, member)
    await manage(org, gone, bob)
    await org.admin.gql(ARCHIVE, {"id": gone.id})
    await set_stages(org, [{"type": "ppm", "quorum": "any"},
                           {"type": "person", "quorum": "any", "personIds": [gone.id, mia.id]}])
    await add_record(bob, bob, day=1)
    service = org.live.service
    await service.executor.documents.prepare(SUBMIT)
    this_task = asyncio.current_task()
    rows: list[int] = []

    def count(_conn: Any, cursor: Any, *_args: Any) -> None:
        if asyncio.current_task() is this_task:
            rows.append(len(getattr(cursor, "_rows", None) or ()))

    event.listen(service.engine.sync_engine, "after_cursor_execute", count)
    try:
        response = await service.executor.run(
            {"query": SUBMIT, "variables": {"p": bob.id, "s": WEEK, "e": WEEK_END}}, bob.apikey)
    finally:
        event.remove(service.engine.sync_engine, "after_cursor_execute", count)
    assert response.body["data"]["submitTimesheet"]["status"] == "s", response.body
    state = (await bob.gql(STATE, {"p": bob.id, "s": WEEK, "e": WEEK_END}))["getApprovalState"]
    return sum(rows), sorted(p["id"] for p in state["pendingApprovers"])


async def test_a_submission_reads_the_same_rows_in_a_small_and_a_large_organisation(
    org: Org,
) -> None:
    small_rows, small_approvers = await _rows_of_one_submit(org, 2)
    large = await new_org(org.live, org.http, "Large")
    large_rows, large_approvers = await _rows_of_one_submit(large, 40)
    assert large_rows == small_rows, (small_rows, large_rows)
    # Still only the active managers approve (the archived one is no candidate).
    assert small_approvers == [org.members["Mia"].id]
    assert large_approvers == [large.members["Mia"].id]
