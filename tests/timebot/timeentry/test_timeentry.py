"""Quick time entry's core through the live GraphQL service: log, edit, delete, undo, week,
submit, refusals in plain words, and nothing half-created."""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest

from tests.support import Org
from tests.timebot.timeentry_setup import MONDAY_BERLIN_MS, Fixture, build, require_approval
from timebot.grammar import parse_entry
from timebot.timeentry import Memory, QuickTime, Who
from timebot.timeentry.plan import (
    AbsenceRow,
    ProjectRow,
    RecordPlan,
    TaskRow,
    Unresolved,
    build_catalogue,
    plain_words,
    plan_entry,
)

HOUR = 3_600_000
BERLIN = ZoneInfo("Europe/Berlin")


def quick(org: Org) -> QuickTime:
    runtime = org.live.app.state.runtime
    return QuickTime(runtime.client, Memory(runtime.state_sessions), org.live.clock.now_ms)


def who(fx: Fixture) -> Who:
    return Who(fx.org.id, fx.employee.id, fx.employee.apikey, BERLIN)


async def test_log_several_entries_each_whole_or_not_at_all(org: Org) -> None:
    fx = await build(org)
    result = await quick(org).log(
        who(fx),
        "2h30 @acme/web fixing the header; 1d vacation friday family trip; 3h @nothing;"
        " 1:30 @beta !nb #wfh “call with Bob”; 9-11:30 @acme/website/design yesterday",
        source="test",
    )
    assert result.parse_error is None
    lines = [o.line() for o in result.outcomes]
    assert lines[0] == "Logged: 2h 30m on Wed 18 Mar 2026 · @Acme/Website · “fixing the header”"
    assert lines[1].startswith("Logged: 1d on Fri 13 Mar 2026 · Vacation · “family trip”")
    assert "counted as 8h" in lines[1]
    assert lines[2].startswith("Not logged: 3h @nothing — @nothing is no project or task")
    records = await fx.records()
    assert len(records) == 4
    vacation, design, website, beta = records
    assert vacation["absence"]["id"] == fx.ids["vacation"] and vacation["duration"] == 8 * HOUR
    assert vacation["comment"] == "family trip"
    assert design["task"]["id"] == fx.ids["design"]
    assert [p["id"] for p in design["projects"]] == [fx.ids["website"]]
    assert design["duration"] == 2 * HOUR + 30 * 60_000
    assert design["startTime"]["ts"] == MONDAY_BERLIN_MS + 86_400_000 + 9 * HOUR  # Tue 9:00
    assert design["endTime"]["ts"] == design["startTime"]["ts"] + design["duration"]
    assert website["comment"] == "fixing the header" and not website["nonBillable"]
    assert beta["wfh"] and beta["nonBillable"] and beta["comment"] == "call with Bob"
    assert website["startTime"]["ts"] == MONDAY_BERLIN_MS + 2 * 86_400_000  # Wed 00:00 Berlin


async def test_ambiguous_target_offers_the_candidates(org: Org) -> None:
    fx = await build(org)
    result = await quick(org).log(who(fx), "1h @alp", source="test")
    (outcome,) = result.outcomes
    assert not outcome.created
    assert [c.label for c in outcome.choices] == ["Alpha", "Alps"]
    retry = await quick(org).log(who(fx), outcome.choices[1].text, source="test")
    assert retry.outcomes[0].created
    assert (await fx.records())[0]["projects"][0]["id"] == fx.ids["alps"]


async def test_list_edit_delete_undo(org: Org) -> None:
    fx = await build(org)
    qt, me = quick(org), who(fx)
    await qt.log(me, "1h @beta monday; 2h @acme tuesday; 3h @alpha", source="test")
    listing, ids = await qt.recent(me)
    assert listing.splitlines()[0].startswith("1. 3h on Wed 18 Mar 2026 · Alpha")
    assert listing.splitlines()[2].startswith("3. 1h on Mon 16 Mar 2026 · Beta")
    message, outcome = await qt.edit(me, "3", "1h30 @beta monday “standup”")
    assert message.endswith("→ 1h 30m on Mon 16 Mar 2026 · @Beta · “standup”"), message
    assert outcome is not None and outcome.record_id is not None
    records = await fx.records()
    assert ids[2] not in {r["id"] for r in records}
    assert records[0]["duration"] == 90 * 60_000 and records[0]["comment"] == "standup"
    assert (await qt.delete(me, "2")).startswith("Deleted: 2h on Tue 17 Mar 2026 · Acme")
    assert "no entry 9" in await qt.delete(me, "9")
    assert (await qt.undo(me)).startswith("Undone: 3h on Wed 18 Mar 2026 · @Alpha")
    assert [r["duration"] for r in await fx.records()] == [90 * 60_000]
    # the edited entry is undone next (it stands for the creation it replaced)
    assert (await qt.undo(me)).startswith("Undone: 1h 30m on Mon 16 Mar 2026")
    assert await fx.records() == []
    assert (await qt.undo(me)).startswith("Nothing to undo")


async def test_week_submit_status_and_a_locked_timesheet(org: Org) -> None:
    fx = await build(org)
    await require_approval(org)
    qt, me = quick(org), who(fx)
    await qt.log(me, "2h @acme monday; 3h @beta; 1d vacation tuesday", source="test")
    week = await qt.week(me)
    assert week.splitlines()[0] == ("Week of Mon 16 Mar 2026: 13h · timesheet draft"
                                    " (not submitted)")
    assert "  Mon 16 Mar 2026: 2h" in week and "  Vacation (absence): 8h" in week
    assert (await qt.submit(me)).startswith("Timesheet for the week of Mon 16 Mar 2026 to Sun"
                                            " 22 Mar 2026 submitted for approval")
    status = await qt.status(me)
    assert status.splitlines()[0].startswith("This week (Mon 16 Mar 2026 to Sun 22 Mar 2026):"
                                             " submitted, awaiting approval (waiting for")
    assert "Last week" in status and "draft" in status.splitlines()[1]
    before = await fx.records()
    result = await qt.log(me, "1h @acme “late”", source="test")
    (outcome,) = result.outcomes
    assert not outcome.created
    assert outcome.problem is not None and "submitted for approval and locked" in outcome.problem
    assert outcome.problem[0].isupper() and outcome.problem.endswith(".")
    assert await fx.records() == before
    assert "Not submitted" in await qt.submit(me)
    assert (await qt.submit(me, last=True)).startswith("Timesheet for the week of Mon 9 Mar")


async def test_a_mail_processed_twice_creates_once(org: Org) -> None:
    fx = await build(org)
    qt, me = quick(org), who(fx)
    for _ in range(2):
        result = await qt.log(me, "1h @beta\n2h @acme", source="mail", source_key="inbox-1")
        assert all(o.created for o in result.outcomes)
    assert len(await fx.records()) == 2


async def test_parse_errors_come_back_whole(org: Org) -> None:
    fx = await build(org)
    result = await quick(org).log(who(fx), "2x @acme", source="test")
    assert result.parse_error is not None and result.outcomes == ()
    assert await fx.records() == []


# --- pure decisions ------------------------------------------------------------------------


def _catalogue() -> object:
    return build_catalogue(
        [ProjectRow("p1", "Acme", None), ProjectRow("p2", "Website", "p1")],
        [TaskRow("t1", "Design", None, ("p2",)), TaskRow("t2", "Loose", None, ())],
        [AbsenceRow("a1", "Vacation", "day"), AbsenceRow("a2", "Sick leave", "hour")],
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2h @acme/website/design", ("t1", ("p2",), None, 2 * HOUR)),
        ("2h @design", ("t1", ("p2",), None, 2 * HOUR)),
        ("2h @loose", ("t2", (), None, 2 * HOUR)),
        ("0.5d vacation", (None, (), "a1", 4 * HOUR)),
        ("4h sick", (None, (), "a2", 4 * HOUR)),
        ("1d sick leave", (None, (), "a2", 8 * HOUR)),
    ],
)
def test_plan_entry(text: str, expected: tuple[object, ...]) -> None:
    from datetime import date

    parsed = parse_entry(text, "Europe/Berlin", date(2026, 3, 18))
    assert isinstance(parsed, list)
    plan = plan_entry(parsed[0], _catalogue())  # type: ignore[arg-type]
    assert isinstance(plan, RecordPlan)
    assert (plan.task_id, plan.project_ids, plan.absence_id, plan.duration_ms) == expected
    reread = parse_entry(plan.reading, "Europe/Berlin", date(2026, 3, 18))
    assert isinstance(reread, list) and len(reread) == 1


def test_plan_entry_without_a_target_or_absence() -> None:
    from datetime import date

    parsed = parse_entry("2h", "UTC", date(2026, 3, 18))
    assert isinstance(parsed, list)
    plan = plan_entry(parsed[0], _catalogue())  # type: ignore[arg-type]
    assert isinstance(plan, Unresolved) and "What was it for?" in plan.reason


def test_plain_words() -> None:
    assert plain_words(['Invalid argument "duration": must not be negative']) == (
        "The duration must not be negative.")
    assert plain_words(["the timesheet for 2026-03-16 to 2026-03-22 is approved and locked"
                        " for its owner"]) == ("The timesheet for 2026-03-16 to 2026-03-22 is"
                                               " approved and locked for its owner.")


async def test_a_step_failing_after_the_record_was_added_leaves_no_record(org: Org) -> None:
    """A real proxy in front of the live service refuses the comment edit (as a service that
    fails mid-way would): the record addTimeRecord created is deleted again."""

    import httpx
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    from tests.net import free_port, started
    from timebot.client import ServiceClient

    fx = await build(org)
    upstream = httpx.AsyncClient(timeout=30)

    async def graphql(request: Request) -> Response:
        body = await request.body()
        if b"editTimeRecordComment" in body:
            return JSONResponse({"data": None, "errors": [{"message": "comment store is down"}]})
        answer = await upstream.post(org.live.graphql_url, content=body, headers={
            "apikey": request.headers.get("apikey", ""), "content-type": "application/json"})
        return Response(answer.content, answer.status_code, media_type="application/json")

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(
        Starlette(routes=[Route("/graphql", graphql, methods=["POST"])]), host="127.0.0.1",
        port=port, log_level="warning", lifespan="off"))
    task = await started(server, "the failing GraphQL proxy")
    client = ServiceClient(f"http://127.0.0.1:{port}/graphql")
    try:
        runtime = org.live.app.state.runtime
        qt = QuickTime(client, Memory(runtime.state_sessions), org.live.clock.now_ms)
        result = await qt.log(who(fx), "2h @acme “with a comment”; 1h @beta", source="test")
        failed, logged = result.outcomes
        assert not failed.created and failed.problem == "Comment store is down."
        assert logged.created
        records = await fx.records()
        assert [r["projects"][0]["id"] for r in records] == [fx.ids["beta"]]
    finally:
        await client.close()
        await upstream.aclose()
        server.should_exit = True
        await task
