"""A person's timesheets are looked up by time within a bounded range of the index: every
such statement bounds start_ms from below too (no timesheet is longer than MAX_PERIOD_MS), so
the lookup reads the rows near the period, not all of the person's earlier timesheets (a
cost that grew with every week a person had ever submitted)."""

from __future__ import annotations

import pytest
from sqlalchemy import event
from sqlalchemy.dialects import sqlite

from service.timesheets import state
from tests.service.test_approvals_support import WEEK, WEEK_END, add_record, submit
from tests.support import Org

LOOKUPS = {
    "timesheet_for_period": state._TIMESHEETS_OVERLAPPING,
    "covering_timesheet": state._COVERING,
    "covering_state": state._COVERING_STATE,
    "period_state": state._PERIOD_STATE,
}


@pytest.mark.parametrize("name", sorted(LOOKUPS))
async def test_the_lookup_searches_a_bounded_range_of_the_index(org: Org, name: str) -> None:
    engine = org.live.service.engine
    if engine.dialect.name != "sqlite":
        pytest.skip("the query plan is read from SQLite (PostgreSQL plans by table size)")
    compiled = LOOKUPS[name].compile(dialect=sqlite.dialect())
    parameters = {key: 1 for key in compiled.params}
    if "wf_ids" in parameters:
        parameters["wf_ids"] = ["x"]
    async with engine.connect() as connection:
        plan = " | ".join(
            str(row[-1]) for row in (await connection.exec_driver_sql(
                "EXPLAIN QUERY PLAN " + str(compiled), tuple(
                    parameters[key] for key in compiled.positiontup or ()
                ),
            )).all()
        )
    assert "ix_timesheets_person_period" in plan, plan
    assert "start_ms>? AND start_ms<?" in plan, plan


async def test_approval_events_of_a_period_read_a_bounded_range(org: Org) -> None:
    """getApprovalEvents(personId, startTime, endTime) reads the person's timesheets with the
    same bounded lookup: every statement on timesheets that bounds start_ms from above also
    bounds it from below, and the events of the period are still found."""
    bob = await org.add_member("Bob")
    await add_record(bob, bob)
    submit_id = (await submit(bob, bob))["id"]
    statements: list[str] = []

    def seen(_conn: object, _cursor: object, statement: str, *_rest: object) -> None:
        statements.append(statement)

    sync_engine = org.live.service.read_engine.sync_engine
    event.listen(sync_engine, "before_cursor_execute", seen)
    try:
        events = await org.admin.gql(
            "query($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { getApprovalEvents("
            "personId: $p, startTime: $s, endTime: $e) { id } }",
            {"p": bob.id, "s": WEEK, "e": WEEK_END},
        )
    finally:
        event.remove(sync_engine, "before_cursor_execute", seen)
    assert submit_id in [e["id"] for e in events["getApprovalEvents"]]
    on_timesheets = [s for s in statements if "FROM timesheets" in s and "start_ms <" in s]
    assert on_timesheets, statements
    for statement in on_timesheets:
        assert "timesheets.start_ms >" in statement, statement


async def test_an_approvers_list_starts_from_their_rows_not_the_organisations_timesheets(
    org: Org,
) -> None:
    """What waits for one approver is searched from their rows of pending_approvals: the
    index of the organisation's submitted timesheets (the whole list's, partial on the status
    literal) is no candidate for it, whatever the planner's statistics say."""
    from service.timesheets.models import Timesheet
    from service.timesheets.overview import submitted_page
    from service.timesheets.pending import _WAITING

    engine = org.live.service.engine
    if engine.dialect.name != "sqlite":
        pytest.skip("the query plan is read from SQLite (PostgreSQL plans by table size)")

    async def plan_of(statement: object) -> str:
        compiled = statement.compile(dialect=sqlite.dialect())  # type: ignore[attr-defined]
        async with engine.connect() as connection:
            return " | ".join(str(row[-1]) for row in (await connection.exec_driver_sql(
                "EXPLAIN QUERY PLAN " + str(compiled),
                tuple(1 for _ in compiled.positiontup or ()))).all())

    waiting = await plan_of(_WAITING)
    assert "ix_pending_approvals_approver" in waiting, waiting
    assert "ix_timesheets_submitted_period" not in waiting, waiting
    first = await plan_of(submitted_page("o", None))
    assert "ix_timesheets_submitted_period" in first, first
    later = await plan_of(submitted_page("o", Timesheet(start_ms=1, id="x")))
    assert "ix_timesheets_submitted_period (organisation_id=? AND (start_ms,id)>(?,?))" in later, \
        later
