"""Through POST /graphql: `requireScheduledTimeDaily` / `requireScheduledTimePeriod` at
submitTimesheet (the refusal names the setting and the shortfall), a project's own
`turnOffPeriodAfter`, and auto-submission (`autoSubmit`) of the person's own period in their
time zone, once however many sweeps run (the right and the wrong role each)."""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime, tzinfo
from zoneinfo import ZoneInfo

from service.timesheets.autosubmit import auto_submit
from service.timesheets.scheduled_time_rules import Shortfall, hours
from tests.service.test_approvals_support import add_project
from tests.support import HOUR_MS, Member, Org

BERLIN = ZoneInfo("Europe/Berlin")
SUBMIT = ("mutation($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { submitTimesheet("
          "personId: $p, startTime: $s, endTime: $e) { status } }")
ADD = ("mutation($p: SvcId!, $s: SvcTimestamp!, $d: Int!, $pr: [SvcId]) { addTimeRecord("
       "personId: $p, startTime: $s, duration: $d, projectIds: $pr) { id } }")
STATE = ("query($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { getApprovalState("
         "personId: $p, startTime: $s, endTime: $e) { status } }")
JOURNAL = "{ getJournal { kind author { id } } }"


def ms(day: str, zone: tzinfo = BERLIN, hour: int = 0, minute: int = 0) -> int:
    d = date.fromisoformat(day)
    return int(datetime(d.year, d.month, d.day, hour, minute, tzinfo=zone).timestamp() * 1000)


async def _in_berlin(org: Org, member: Member) -> None:
    await org.admin.gql("mutation($id: SvcId!) { editPersonLocalisationTimeZone(id: $id,"
                        " timeZone: \"Europe/Berlin\") { id } }", {"id": member.id})


async def _week(who: Member, hours_by_day: dict[str, float]) -> None:
    for day, count in hours_by_day.items():
        await who.gql(ADD, {"p": who.id, "s": ms(day, hour=9), "d": int(count * HOUR_MS)})


def test_shortfall_texts() -> None:
    assert hours(6 * HOUR_MS) == "6h" and hours(int(7.5 * HOUR_MS)) == "7h 30m"
    assert hours(45 * 60_000) == "45m"
    day = date(2026, 11, 24)
    assert Shortfall(day, day, 6 * HOUR_MS, 8 * HOUR_MS).text == "Tue 24 Nov has 6h of 8h " \
        "scheduled"


async def test_require_scheduled_time_daily(org: Org) -> None:
    bob, carol = await org.add_member("Bob"), await org.add_member("Carol")
    await _in_berlin(org, bob)
    org.live.clock.set(ms("2026-11-30", hour=10))
    edit = ("mutation($id: SvcId!, $v: Boolean) { editPersonTimeSettingsRequireScheduledTimeDaily"
            "(id: $id, requireScheduledTimeDaily: $v) { timeSettings {"
            " requireScheduledTimeDaily { value path { collection } } } } }")
    # The wrong role: an employee may not set it, not even for themselves.
    assert await bob.gql.denied(edit, {"id": bob.id, "v": True})
    shown = await org.admin.gql(edit, {"id": bob.id, "v": True})
    assert shown["editPersonTimeSettingsRequireScheduledTimeDaily"]["timeSettings"][
        "requireScheduledTimeDaily"] == {"value": True, "path": [{"collection": "persons"}]}
    await _week(bob, {"2026-11-23": 8, "2026-11-24": 6, "2026-11-25": 8, "2026-11-26": 8})
    week = {"p": bob.id, "s": ms("2026-11-23"), "e": ms("2026-11-30")}
    message = await bob.gql.error(SUBMIT, week)
    assert message == ("The timesheet settings require each working day's scheduled time "
                       "(requireScheduledTimeDaily of person Bob): Tue 24 Nov has 6h of 8h "
                       "scheduled; Fri 27 Nov has 0h of 8h scheduled"), message
    # The wrong role may not submit Bob's timesheet at all.
    assert await carol.gql.denied(SUBMIT, week) == ["Mutation.submitTimesheet"]
    await _week(bob, {"2026-11-24": 2, "2026-11-27": 8})
    assert (await bob.gql(SUBMIT, week))["submitTimesheet"]["status"] == "a"


async def test_require_scheduled_time_period(org: Org) -> None:
    bob = await org.add_member("Bob")
    await _in_berlin(org, bob)
    org.live.clock.set(ms("2026-12-07", hour=10))
    tag = (await org.admin.gql('mutation { addTag(name: "Flexible") { id } }'))["addTag"]["id"]
    await org.admin.gql("mutation($t: SvcId!, $p: SvcId!) { tagPerson(tagId: $t, personId: $p)"
                        " { id } editTagTimeSettingsRequireScheduledTimePeriod(id: $t,"
                        " requireScheduledTimePeriod: true) { id } }", {"t": tag, "p": bob.id})
    assert await bob.gql.denied("mutation($t: SvcId!) { editTagTimeSettingsRequireScheduled"
                                "TimePeriod(id: $t, requireScheduledTimePeriod: false) { id } }",
                                {"t": tag})
    # The period counts as a whole: a long Monday makes up for a short Tuesday.
    await _week(bob, {"2026-11-30": 10, "2026-12-01": 6, "2026-12-02": 8, "2026-12-03": 8,
                      "2026-12-04": 5.5})
    week = {"p": bob.id, "s": ms("2026-11-30"), "e": ms("2026-12-07")}
    assert await bob.gql.error(SUBMIT, week) == (
        "The timesheet settings require the period's scheduled time (requireScheduledTimePeriod"
        " of tag Flexible): Mon 30 Nov to Sun 6 Dec has 37h 30m of 40h scheduled")
    await _week(bob, {"2026-12-04": 2.5})
    assert (await bob.gql(SUBMIT, week))["submitTimesheet"]["status"] == "a"


async def test_a_projects_turn_off_period_after(org: Org) -> None:
    bob = await org.add_member("Bob")
    org.live.clock.set(ms("2026-11-12", UTC, hour=12))  # a Thursday
    acme = await add_project(org, "Acme")
    edit = ("mutation($id: SvcId!, $v: Int) { editProjectTimeSettingsTurnOffPeriodAfter("
            "id: $id, turnOffPeriodAfter: $v) { timeSettings { turnOffPeriodAfter { value"
            " path { collection name } } } } }")
    assert await bob.gql.denied(edit, {"id": acme, "v": 1})
    shown = await org.admin.gql(edit, {"id": acme, "v": 1})
    assert shown["editProjectTimeSettingsTurnOffPeriodAfter"]["timeSettings"][
        "turnOffPeriodAfter"] == {"value": 1, "path": [{"collection": "projects", "name": "Acme"}]}
    last_week = ms("2026-11-05", UTC, hour=9)
    message = await bob.gql.error(ADD, {"p": bob.id, "s": last_week, "d": HOUR_MS,
                                        "pr": [acme]})
    assert message.startswith("The week of 2026-11-02 to 2026-11-08 is closed "
                              "(turnOffPeriodAfter of project Acme: a period takes no more "
                              "time 1 days after it ends"), message
    # Time on no project (or another) follows the person's settings: none here.
    assert await bob.gql(ADD, {"p": bob.id, "s": last_week, "d": HOUR_MS, "pr": None})
    # A project may keep its periods open longer than its people's.
    await org.admin.gql("mutation { editOrganisationTimeSettingsTurnOffPeriodAfter("
                        "turnOffPeriodAfter: 0) { id } }")
    assert "organisation" in await bob.gql.error(ADD, {"p": bob.id, "s": last_week,
                                                        "d": HOUR_MS, "pr": None})
    await org.admin.gql(edit, {"id": acme, "v": 30})
    assert await bob.gql(ADD, {"p": bob.id, "s": last_week, "d": HOUR_MS, "pr": [acme]})


async def _status(who: Member, owner: Member, start: int, end: int) -> str:
    data = await who.gql(STATE, {"p": owner.id, "s": start, "e": end})
    return str(data["getApprovalState"]["status"])


async def test_auto_submit_in_the_persons_zone_and_period(org: Org) -> None:
    bob = await org.add_member("Bob")
    await _in_berlin(org, bob)
    org.live.clock.set(ms("2026-11-02", hour=12))
    edit = ("mutation($id: SvcId!) { editPersonTimeSettingsAutoSubmit(id: $id, autoSubmit: 2)"
            " { id } editPersonTimeSettingsPeriodicity(id: $id, periodicity: \"monthly\")"
            " { id } }")
    assert await bob.gql.denied(edit, {"id": bob.id})
    await org.admin.gql(edit, {"id": bob.id})
    # 00:30 on 1 November in Berlin is still October in UTC: the entry is November's.
    await bob.gql(ADD, {"p": bob.id, "s": ms("2026-11-01", minute=30), "d": HOUR_MS})
    november = (ms("2026-11-01"), ms("2026-12-01"))
    sessions = org.live.service.sessions
    # Two days after the month's end, Berlin midnight; a minute before, nothing.
    assert await auto_submit(sessions, ms("2026-12-02", hour=23, minute=59)) == 0
    assert await _status(bob, bob, *november) == "d"
    due = ms("2026-12-03")
    # Two sweeps at once (two processes), then a retry: the month is submitted once.
    first = await asyncio.gather(auto_submit(sessions, due), auto_submit(sessions, due))
    assert sum(first) == 1, first
    assert await auto_submit(sessions, due + HOUR_MS) == 0
    assert await _status(bob, bob, *november) == "a"
    kinds = [e["kind"] for e in (await bob.gql(JOURNAL))["getJournal"]]
    assert kinds.count("Auto-submitted") == 1, kinds
    # Berlin's October is not touched (a UTC week or month around the entry would be).
    assert await _status(bob, bob, ms("2026-10-01"), ms("2026-11-01")) == "d"


async def test_auto_submit_waits_for_the_scheduled_time(org: Org) -> None:
    bob = await org.add_member("Bob")
    await _in_berlin(org, bob)
    # Before the week is due: the live server's own sweep (the webhook worker, on this clock)
    # must not submit it between the test's steps.
    org.live.clock.set(ms("2026-11-22", hour=12))
    await org.admin.gql("mutation($id: SvcId!) { editPersonTimeSettingsAutoSubmit(id: $id,"
                        " autoSubmit: 0) { id } editPersonTimeSettingsRequireScheduledTimeDaily("
                        "id: $id, requireScheduledTimeDaily: true) { id } }", {"id": bob.id})
    await _week(bob, {"2026-11-16": 8})
    week = (ms("2026-11-16"), ms("2026-11-23"))
    assert await auto_submit(org.live.service.sessions, ms("2026-11-24")) == 0
    assert await _status(bob, bob, *week) == "d"
    await _week(bob, {day: 8 for day in ("2026-11-17", "2026-11-18", "2026-11-19",
                                         "2026-11-20")})
    assert await auto_submit(org.live.service.sessions, ms("2026-11-24")) == 1
    assert await _status(bob, bob, *week) == "a"
