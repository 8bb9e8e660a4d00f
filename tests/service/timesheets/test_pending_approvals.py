"""What waits for an approver (issue #26): getPendingApprovals reads the approver's rows of
pending_approvals, not every submitted timesheet of the organisation; the team's states and
the reminders read everyone in a bounded number of statements. Pinned by counting the SQL
statements of one request with few and with many other timesheets or people: the count must
not grow with the organisation."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from sqlalchemy import delete, event

from service.timesheets.models import PendingApproval
from service.timesheets.pending import rebuild_missing
from tests.service.test_approvals_support import (
    PENDING,
    WEEK,
    add_record,
    approve,
    manage,
    reject,
    set_stages,
    submit,
)
from tests.support import DAY_MS, Member, Org

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow

SUBMIT_PERIOD = (
    "mutation($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { "
    "submitTimesheet(personId: $p, startTime: $s, endTime: $e) { id } }"
)
TEAM = (
    "query($p: [SvcId!]!, $s: SvcTimestamp!, $e: SvcTimestamp!) { getTeamApprovalStates("
    "personIds: $p, startTime: $s, endTime: $e) { person { id } status submitId "
    "pendingApprovers { id } totalDuration } }"
)
REMIND = (
    "mutation($p: [SvcId!]!, $s: SvcTimestamp!, $e: SvcTimestamp!) { sendTimesheetReminder("
    "personIds: $p, startTime: $s, endTime: $e) }"
)
WEEK_MS = 7 * DAY_MS
# The key with its organisation and person; what waits (pending_approvals joined with the
# timesheets and approvals); the submit events' authors; the current rounds' approvals; the
# persons named; the totals. With showAll, the organisation's submitted timesheets instead.
STATEMENTS_OF_PENDING = 6


async def statements(org: Org, member: Member, query: str, variables: dict[str, Any]
                     ) -> tuple[list[str], dict[str, Any]]:
    """The statements one request runs (the second of its document: the first parses it)."""
    service = org.live.service
    payload = {"query": query, "variables": variables}
    await service.executor.run(payload, member.apikey)
    this_task = asyncio.current_task()
    seen: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if asyncio.current_task() is this_task and not statement.startswith("BEGIN"):
            seen.append(" ".join(statement.split())[:100])

    engines = {id(e): e for e in (service.engine, service.read_engine)}.values()
    for engine in engines:
        event.listen(engine.sync_engine, "before_cursor_execute", count)
    try:
        response = await service.executor.run(payload, member.apikey)
    finally:
        for engine in engines:
            event.remove(engine.sync_engine, "before_cursor_execute", count)
    assert not response.body.get("errors"), response.body
    data: dict[str, Any] = response.body["data"]
    return seen, data


async def submit_weeks(who: Member, owner: Member, first: int, count: int) -> None:
    for week in range(first, first + count):
        start = WEEK + week * WEEK_MS
        await who.gql(SUBMIT_PERIOD, {"p": owner.id, "s": start, "e": start + WEEK_MS})


async def test_an_approvers_list_reads_the_same_statements_however_much_else_waits(
    org: Org,
) -> None:
    bob = await org.add_member("Bob")
    carl = await org.add_member("Carl")
    mia = await org.add_member("Mia", role="manager")
    dan = await org.add_member("Dan", role="manager")
    await manage(org, mia, bob)
    await manage(org, dan, carl)
    await set_stages(org, [{"type": "ppm", "quorum": "any"}])
    await add_record(bob, bob, day=0)
    await submit_weeks(bob, bob, 0, 3)  # what waits for Mia
    await submit_weeks(carl, carl, 0, 10)  # what waits for Dan, not Mia
    few, data = await statements(org, mia, PENDING, {"all": False})
    assert [p["person"]["id"] for p in data["getPendingApprovals"]] == [bob.id] * 3
    assert data["getPendingApprovals"][0]["totalDuration"] == 2 * 3_600_000
    admin_few, data = await statements(org, org.admin, PENDING, {"all": True})
    assert len(data["getPendingApprovals"]) == 13
    await submit_weeks(carl, carl, 10, 100)
    many, data = await statements(org, mia, PENDING, {"all": False})
    assert [p["person"]["id"] for p in data["getPendingApprovals"]] == [bob.id] * 3
    assert len(many) == len(few) == STATEMENTS_OF_PENDING, "\n".join(many)
    admin_many, data = await statements(org, org.admin, PENDING, {"all": True})
    assert len(data["getPendingApprovals"]) == 113
    assert len(admin_many) == len(admin_few), "\n".join(admin_many)


async def test_the_list_follows_every_transition_of_a_two_stage_workflow(org: Org) -> None:
    bob = await org.add_member("Bob")
    mia = await org.add_member("Mia", role="manager")
    ann = await org.add_member("Ann", role="manager")
    zed = await org.add_member("Zed", role="manager")
    await manage(org, mia, bob)
    await manage(org, ann, bob)
    await set_stages(org, [{"type": "ppm", "quorum": "all"},
                           {"type": "person", "personIds": [zed.id]}])
    await add_record(bob, bob, day=0)

    async def waiting(who: Member) -> list[str]:
        data = await who.gql(PENDING, {"all": False})
        return [p["submitId"] for p in data["getPendingApprovals"]]

    first = (await submit(bob, bob))["id"]
    assert await waiting(mia) == [first] and await waiting(ann) == [first]
    assert await waiting(zed) == []
    await approve(mia, first)
    assert await waiting(mia) == [] and await waiting(ann) == [first]
    await approve(ann, first)
    assert await waiting(ann) == [] and await waiting(zed) == [first]
    await reject(zed, first, 1, "the hours on Monday")
    assert await waiting(zed) == [] and await waiting(mia) == []
    again = (await submit(bob, bob))["id"]
    assert again != first
    assert await waiting(mia) == [again] and await waiting(ann) == [again]
    await approve(mia, again)
    await approve(ann, again)
    await approve(zed, again)
    assert [await waiting(m) for m in (mia, ann, zed)] == [[], [], []]


async def test_the_service_rebuilds_the_rows_of_submitted_timesheets(org: Org) -> None:
    bob = await org.add_member("Bob")
    mia = await org.add_member("Mia", role="manager")
    await manage(org, mia, bob)
    await set_stages(org, [{"type": "ppm", "quorum": "any"}])
    await submit_weeks(bob, bob, 0, 3)
    service = org.live.service
    async with service.sessions() as session, session.begin():
        await session.execute(
            delete(PendingApproval).where(PendingApproval.organisation_id == org.id)
        )
    assert (await mia.gql(PENDING, {"all": False}))["getPendingApprovals"] == []
    assert await rebuild_missing(service.sessions, batch=2) >= 3
    listed = (await mia.gql(PENDING, {"all": False}))["getPendingApprovals"]
    assert [p["person"]["id"] for p in listed] == [bob.id] * 3
    assert await rebuild_missing(service.sessions) == 0


async def test_team_states_and_reminders_read_everyone_at_once(org: Org) -> None:
    mia = await org.add_member("Mia", role="manager")
    await set_stages(org, [{"type": "ppm", "quorum": "any"}])
    team: list[Member] = []

    async def grow(to: int) -> None:
        while len(team) < to:
            member = await org.add_member(f"P{len(team)}")
            await manage(org, mia, member)
            await add_record(member, member, day=0)
            if len(team) % 2:
                await submit(member, member)
            team.append(member)

    async def measure() -> tuple[int, int]:
        variables = {"p": [m.id for m in team], "s": WEEK, "e": WEEK + WEEK_MS}
        seen, data = await statements(org, mia, TEAM, variables)
        states = data["getTeamApprovalStates"]
        assert [s["person"]["id"] for s in states] == [m.id for m in team]
        assert {s["status"] for s in states} == {"d", "s"}
        assert {s["totalDuration"] for s in states} == {2 * 3_600_000}
        reminded, data = await statements(org, mia, REMIND, variables)
        assert data["sendTimesheetReminder"] is True
        return len(seen), len(reminded)

    await grow(3)
    few = await measure()
    await grow(12)
    assert await measure() == few


async def test_the_whole_organisations_list_is_read_a_page_at_a_time(
    org: Org, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """showAll reads and answers the submitted timesheets SUBMITTED_PAGE at a time (the event
    loop free in between, one page's objects held at a time): every one listed once, in
    period order, whatever page boundary falls between timesheets of the same period."""
    from service.timesheets import overview

    people = [await org.add_member(f"P{i}") for i in range(3)]
    mia = await org.add_member("Mia", role="manager")
    for person in people:
        await manage(org, mia, person)
    await set_stages(org, [{"type": "ppm", "quorum": "any"}])
    for person in people:
        await submit_weeks(person, person, 0, 3)  # three timesheets in each of three periods
    whole, data = await statements(org, org.admin, PENDING, {"all": True})
    expected = [(p["startTime"]["ts"], p["submitId"]) for p in data["getPendingApprovals"]]
    assert len(expected) == len(set(expected)) == 9
    assert [ts for ts, _ in expected] == sorted(ts for ts, _ in expected)
    monkeypatch.setattr(overview, "SUBMITTED_PAGE", 2)
    paged, data = await statements(org, org.admin, PENDING, {"all": True})
    assert [(p["startTime"]["ts"], p["submitId"]) for p in data["getPendingApprovals"]] == expected
    # Five pages of 2 instead of one, each answered before the next is read: its timesheets,
    # their submitters and approvals, the people named and the totals (five statements).
    assert len(paged) == len(whole) + 4 * 5, "\n".join(paged)
