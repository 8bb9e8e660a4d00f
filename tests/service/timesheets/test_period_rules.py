"""The timesheet period settings through POST /graphql: `periodicity` and
`allowPartialPeriodSubmit` on submitTimesheet (each periodicity, the right and the wrong
period, partial allowed and refused, the wrong role), `turnOffPeriodAfter` on adding time;
and the periods themselves (plumbing/periods.py) as pure functions."""

from __future__ import annotations

from datetime import UTC, date, datetime, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from sqlalchemy import select

from plumbing import periods
from plumbing.db import unit_of_work
from service.demo import find_demo_organisation, seed_demo
from service.models import Person as DbPerson
from service.organisation.provisioning import ensure_api_key
from tests.support import GQL, LiveServer, Member, Org

SUBMIT = ("mutation($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { submitTimesheet("
          "personId: $p, startTime: $s, endTime: $e) { status } }")
ADD = ("mutation($p: SvcId!, $s: SvcTimestamp!) { addTimeRecord(personId: $p, startTime: $s,"
       " duration: 3600000) { id } }")
BERLIN = ZoneInfo("Europe/Berlin")


def ms(day: str, zone: tzinfo = BERLIN, hour: int = 0) -> int:
    d = date.fromisoformat(day)
    return int(datetime(d.year, d.month, d.day, hour, tzinfo=zone).timestamp() * 1000)


@pytest.mark.parametrize(("kind", "first", "day", "expected"), [
    ("daily", 1, "2026-11-18", ("2026-11-18", "2026-11-19")),
    ("weekly", 1, "2026-11-18", ("2026-11-16", "2026-11-23")),
    ("weekly", 0, "2026-11-18", ("2026-11-15", "2026-11-22")),
    ("weekly", 6, "2026-11-21", ("2026-11-21", "2026-11-28")),
    ("biWeekly", 1, "2026-11-18", ("2026-11-09", "2026-11-23")),
    ("biWeekly", 1, "2026-11-23", ("2026-11-23", "2026-12-07")),
    ("biWeekly", 1, "1970-01-05", ("1970-01-05", "1970-01-19")),
    ("biWeekly", 0, "1970-01-04", ("1970-01-04", "1970-01-18")),
    ("semiMonthly", 1, "2026-11-15", ("2026-11-01", "2026-11-16")),
    ("semiMonthly", 1, "2026-02-16", ("2026-02-16", "2026-03-01")),
    ("monthly", 1, "2026-12-31", ("2026-12-01", "2027-01-01")),
    ("nonsense", 1, "2026-11-18", ("2026-11-16", "2026-11-23")),  # the default: weekly
])
def test_period_of(kind: str, first: int, day: str, expected: tuple[str, str]) -> None:
    start, end = periods.period_of(kind, date.fromisoformat(day), first)
    assert (start.isoformat(), end.isoformat()) == expected


def test_periods_in_the_time_zone() -> None:
    # 23:30 UTC on 31 October is 1 November in Berlin: November's month, from local midnight.
    moment = int(datetime(2026, 10, 31, 23, 30, tzinfo=UTC).timestamp() * 1000)
    assert periods.period_at("monthly", moment, BERLIN) == (ms("2026-11-01"), ms("2026-12-01"))
    assert periods.previous_period("monthly", moment, BERLIN) == (ms("2026-10-01"),
                                                                  ms("2026-11-01"))
    assert periods.dates_label(ms("2026-11-01"), ms("2026-12-01"), BERLIN) == (
        "2026-11-01 to 2026-11-30")
    assert periods.submit_problem("monthly", True, ms("2026-11-03"), ms("2026-11-10"),
                                  BERLIN) is None
    assert periods.submit_problem("monthly", False, ms("2026-11-03"), ms("2026-11-10"),
                                  BERLIN) == "submit the whole month, 2026-11-01 to 2026-11-30"


async def _tag(org: Org, name: str, member: Member, **settings: Any) -> str:
    tag = (await org.admin.gql(f'mutation {{ addTag(name: "{name}") {{ id }} }}'))[
        "addTag"]["id"]
    await org.admin.gql("mutation($t: SvcId!, $p: SvcId!) { tagPerson(tagId: $t, personId: $p)"
                        " { id } }", {"t": tag, "p": member.id})
    for setting, value in settings.items():
        edit = f"editTagTimeSettings{setting[0].upper()}{setting[1:]}"
        await org.admin.gql(f"mutation($t: SvcId!, $v: Boolean) {{ {edit}(id: $t, {setting}: $v)"
                            " { id } }" if isinstance(value, bool) else
                            f"mutation($t: SvcId!, $v: SvcPeriodicity) {{ {edit}(id: $t,"
                            f" {setting}: $v) {{ id }} }}", {"t": tag, "v": value})
    return str(tag)


async def _in_berlin(org: Org, member: Member, first_day: int = 1) -> None:
    await org.admin.gql("mutation($id: SvcId!, $d: SvcFirstDayOfWeek) {"
                        " editPersonLocalisationTimeZone(id: $id, timeZone: \"Europe/Berlin\")"
                        " { id } editPersonLocalisationFirstDayOfWeek(id: $id,"
                        " firstDayOfWeek: $d) { id } }", {"id": member.id, "d": first_day})


async def _submit(who: Member, owner: Member, start: str, end: str) -> dict[str, Any]:
    return await who.gql.body(SUBMIT, {"p": owner.id, "s": ms(start), "e": ms(end)})


async def test_a_monthly_team_submits_its_month(org: Org) -> None:
    bob, carol = await org.add_member("Bob"), await org.add_member("Carol")
    await _in_berlin(org, bob)
    await _tag(org, "Monthly team", bob, periodicity="monthly")
    refused = await _submit(bob, bob, "2026-11-02", "2026-11-09")
    message = refused["errors"][0]["message"]
    assert "The timesheet period is monthly (periodicity of tag Monthly team" in message
    assert "submit the whole month, 2026-11-01 to 2026-11-30" in message
    assert "allowPartialPeriodSubmit" in message
    # The wrong role: another employee may not submit Bob's month, right period or not.
    assert await carol.gql.denied(SUBMIT, {"p": bob.id, "s": ms("2026-11-01"),
                                           "e": ms("2026-12-01")}) == ["Mutation.submitTimesheet"]
    # An employee may not choose the period either.
    assert await bob.gql.denied("mutation($id: SvcId!) { editPersonTimeSettingsPeriodicity("
                                "id: $id, periodicity: \"daily\") { id } }", {"id": bob.id})
    done = await _submit(bob, bob, "2026-11-01", "2026-12-01")
    assert done["data"]["submitTimesheet"]["status"] == "a", done
    # Where no account, tag or person sets a period, any period is accepted (as before).
    assert (await _submit(carol, carol, "2026-11-03", "2026-11-05"))["data"]


async def test_each_periodicity_and_partial_submits(org: Org) -> None:
    carol = await org.add_member("Carol")
    await _in_berlin(org, carol, first_day=0)  # weeks from Sunday
    edit = ("mutation($id: SvcId!, $v: SvcPeriodicity, $pa: Boolean) {"
            " editPersonTimeSettingsPeriodicity(id: $id, periodicity: $v) { id }"
            " editPersonTimeSettingsAllowPartialPeriodSubmit(id: $id,"
            " allowPartialPeriodSubmit: $pa) { id } }")
    cases = [  # periodicity, partial, (refused), (accepted)
        ("daily", None, ("2026-01-05", "2026-01-07"), ("2026-01-05", "2026-01-06")),
        ("weekly", None, ("2026-01-12", "2026-01-19"), ("2026-01-11", "2026-01-18")),
        ("biWeekly", None, ("2026-01-25", "2026-02-08"), ("2026-02-01", "2026-02-15")),
        ("semiMonthly", None, ("2026-03-01", "2026-04-01"), ("2026-03-16", "2026-04-01")),
        ("monthly", None, ("2026-04-01", "2026-04-30"), ("2026-04-01", "2026-05-01")),
        ("monthly", True, ("2026-05-20", "2026-06-03"), ("2026-05-03", "2026-05-10")),
        ("semiMonthly", True, ("2026-06-10", "2026-06-17"), ("2026-06-16", "2026-06-20")),
    ]
    for kind, partial, wrong, right in cases:
        await org.admin.gql(edit, {"id": carol.id, "v": kind, "pa": partial})
        message = (await _submit(carol, carol, *wrong))["errors"][0]["message"]
        assert f"The timesheet period is {kind} (periodicity of person Carol" in message, kind
        expected = ("a part of a period is allowed: allowPartialPeriodSubmit of person Carol"
                    if partial else "a part of a period is not allowed")
        assert expected in message, (kind, message)
        body = await _submit(carol, carol, *right)
        assert body["data"]["submitTimesheet"]["status"] == "a", (kind, body)
    # The double submit of an approved period is refused, by the approval rules.
    await org.admin.gql(edit, {"id": carol.id, "v": "monthly", "pa": False})
    assert "already approved" in (await _submit(carol, carol, "2026-04-01", "2026-05-01"))[
        "errors"][0]["message"]
    # The sunday-start week in the message.
    await org.admin.gql(edit, {"id": carol.id, "v": "weekly", "pa": False})
    message = (await _submit(carol, carol, "2026-07-06", "2026-07-13"))["errors"][0]["message"]
    assert "submit the whole week, 2026-07-05 to 2026-07-11" in message


async def test_turn_off_period_after(org: Org) -> None:
    bob = await org.add_member("Bob")
    org.live.clock.set(ms("2026-11-12", UTC, hour=12))  # a Thursday
    turn_off = ("mutation($v: Int) { editOrganisationTimeSettingsTurnOffPeriodAfter("
                "turnOffPeriodAfter: $v) { id } }")
    # The wrong role may not turn periods off.
    assert await bob.gql.denied(turn_off, {"v": 1})
    await org.admin.gql(turn_off, {"v": 3})
    last_week = ms("2026-11-05", UTC, hour=9)
    message = await bob.gql.error(ADD, {"p": bob.id, "s": last_week})
    assert "The week of 2026-11-02 to 2026-11-08 is closed (turnOffPeriodAfter of " \
        "organisation " in message
    assert message.endswith(": a period takes no more time 3 days after it ends; this one "
                            "ended 2026-11-08): record time from 2026-11-09 on"), message
    # The admin too: the setting exempts no one.
    assert "turnOffPeriodAfter" in await org.admin.gql.error(ADD, {"p": bob.id, "s": last_week})
    assert await bob.gql(ADD, {"p": bob.id, "s": ms("2026-11-10", UTC, hour=9)})
    await org.admin.gql(turn_off, {"v": 4})
    assert await bob.gql(ADD, {"p": bob.id, "s": last_week})
    # A monthly team's month is open until it ends (and the days after it).
    await _tag(org, "Monthly team", bob, periodicity="monthly")
    await org.admin.gql(turn_off, {"v": 0})
    assert await bob.gql(ADD, {"p": bob.id, "s": ms("2026-11-02", UTC, hour=9)})
    message = await bob.gql.error(ADD, {"p": bob.id, "s": ms("2026-10-30", UTC, hour=9)})
    assert "The month of 2026-10-01 to 2026-10-31 is closed" in message
    assert "record time from 2026-11-01 on" in message
    # Off again: any time.
    await org.admin.gql(turn_off, {"v": None})
    assert await bob.gql(ADD, {"p": bob.id, "s": ms("2026-10-30", UTC, hour=9)})


async def test_the_demo_design_team_is_monthly(live: LiveServer, http: httpx.AsyncClient
                                               ) -> None:
    now = live.clock.now_ms()
    async with unit_of_work(live.service.sessions) as session:
        await seed_demo(session, now)
        organisation = await find_demo_organisation(session)
        assert organisation is not None
        dorothy = (await session.scalars(select(DbPerson).where(
            DbPerson.organisation_id == organisation.id,
            DbPerson.email == "dorothy@northwind.example"))).one()
        key = await ensure_api_key(session, dorothy, now)
        zone = ZoneInfo(organisation.timezone)
    gql = GQL(http, live.graphql_url, key)
    mine = (await gql("query($id: SvcId!) { getPerson(id: $id) { timeSettings { periodicity {"
                      " value path { name } } } } }", {"id": dorothy.id}))["getPerson"]
    assert mine["timeSettings"]["periodicity"] == {"value": "monthly",
                                                   "path": [{"name": "Design"}]}
    start, end = periods.previous_period("monthly", now, zone)
    week = periods.period_at("weekly", start + 10 * 86_400_000, zone)
    message = await gql.error(SUBMIT, {"p": dorothy.id, "s": week[0], "e": week[1]})
    assert "The timesheet period is monthly (periodicity of tag Design" in message
    submitted = await gql(SUBMIT, {"p": dorothy.id, "s": start, "e": end})
    assert submitted["submitTimesheet"]["status"] == "s"


async def test_a_periods_last_millisecond_means_the_whole_period(org: Org) -> None:
    """#43: an end given as the period's last millisecond (Sun 23:59:59.999) is the whole
    period, as the next period's first is, whether the setting is the person's own or
    inherited from the account, weekly or monthly; both ends name one timesheet."""
    bob, carol = await org.add_member("Bob"), await org.add_member("Carol")
    await _in_berlin(org, bob)
    await _in_berlin(org, carol)
    # Bob: the account's periodicity (inherited).
    await org.admin.gql("mutation { editOrganisationTimeSettingsPeriodicity("
                        "periodicity: weekly) { id } }")
    week = {"p": bob.id, "s": ms("2026-10-12"), "e": ms("2026-10-19") - 1}
    body = await bob.gql.body(SUBMIT, week)
    assert body.get("data") and body["data"]["submitTimesheet"]["status"] == "a", body
    # The same week with the next period's first millisecond is that very timesheet.
    again = await _submit(bob, bob, "2026-10-12", "2026-10-19")
    assert "the timesheet for " in again["errors"][0]["message"]
    assert "is already approved" in again["errors"][0]["message"], again
    # A part of the week ending on a day's last millisecond is still refused as a part.
    message = await bob.gql.error(SUBMIT, {"p": bob.id, "s": ms("2026-10-19"),
                                           "e": ms("2026-10-22") - 1})
    assert "submit the whole week, 2026-10-19 to 2026-10-25" in message
    # Carol: her own allowPartialPeriodSubmit, set to its default (false), and monthly.
    await org.admin.gql("mutation($id: SvcId!) { editPersonTimeSettingsAllowPartialPeriodSubmit("
                        "id: $id, allowPartialPeriodSubmit: false) { id }"
                        " editPersonTimeSettingsPeriodicity(id: $id, periodicity: monthly)"
                        " { id } }", {"id": carol.id})
    month = {"p": carol.id, "s": ms("2026-11-01"), "e": ms("2026-12-01") - 1}
    body = await carol.gql.body(SUBMIT, month)
    assert body.get("data") and body["data"]["submitTimesheet"]["status"] == "a", body
    assert "is already approved" in await carol.gql.error(
        SUBMIT, {"p": carol.id, "s": ms("2026-11-01"), "e": ms("2026-12-01")})
    # With a part allowed, a part ending on a day's last millisecond is that part.
    await org.admin.gql("mutation($id: SvcId!) { editPersonTimeSettingsAllowPartialPeriodSubmit("
                        "id: $id, allowPartialPeriodSubmit: true) { id } }", {"id": carol.id})
    body = await carol.gql.body(SUBMIT, {"p": carol.id, "s": ms("2026-12-01"),
                                         "e": ms("2026-12-08") - 1})
    assert body.get("data") and body["data"]["submitTimesheet"]["status"] == "a", body
    assert "is already approved" in await carol.gql.error(
        SUBMIT, {"p": carol.id, "s": ms("2026-12-01"), "e": ms("2026-12-08")})
