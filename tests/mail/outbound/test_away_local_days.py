"""Issue 28, an approver's days are their own: time off, holidays and "today" are read in the
approver's time zone (`localisation.timeZone`, read over GraphQL with the time off), not by
UTC day, and the escalation delay's working days in the timesheet owner's. A Berlin approver
whose day off is tomorrow is not away at 23:30 UTC today, and is from midnight in Berlin
(23:00 UTC); a New York approver whose day off is today is away until midnight in New York
(05:00 UTC the next UTC day). The virtual clock (`live.clock`), no waiting; SQLite and
PostgreSQL (`org`); the escalation pass also over HTTP (as with a hosted service), its
requests counted."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import httpx

from tests.mail.outbound.test_escalations import submitted
from tests.mail.reviews_support import jobs, runtime_of, set_stages
from tests.support import DAY_MS, HOUR_MS, Member, Org, new_org
from timebot.client import ServiceClient
from timebot.notify.away_facts import (
    away_now,
    days_off,
    person_facts,
    read_window,
    service_absences,
)
from timebot.notify.escalation_tick import ESCALATION, Escalator
from timebot.notify.escalations import add_working_days
from timebot.notify.periods import local_date
from timebot.state.away import Absence, is_away

BERLIN, NEW_YORK = "Europe/Berlin", "America/New_York"
# Wednesday 2 and Thursday 3 December 2026, 00:00 UTC.
WEDNESDAY = int(datetime(2026, 12, 2, tzinfo=UTC).timestamp() * 1000)
THURSDAY = WEDNESDAY + DAY_MS
MONDAY = WEDNESDAY - 2 * DAY_MS


def ms(year: int, month: int, day: int, hour: int, minute: int = 0, zone: str = "UTC") -> int:
    """A local moment in `zone`, as Unix ms."""
    return int(datetime(year, month, day, hour, minute, tzinfo=ZoneInfo(zone)).timestamp()
               * 1000)


async def in_zone(org: Org, *members_zones: tuple[Member, str]) -> None:
    for member, zone in members_zones:
        await org.admin.gql("mutation($p: SvcId!, $z: SvcTimeZone) { "
                            "editPersonLocalisationTimeZone(id: $p, timeZone: $z) { id } }",
                            {"p": member.id, "z": zone})


async def day_off(org: Org, person: Member, start_ms: int) -> None:
    """Eight hours of Vacation from `start_ms`, recorded in the service as anyone does."""
    kinds = (await org.admin.gql("query { getAbsenceTypes { id name } }"))["getAbsenceTypes"]
    kind = next((k["id"] for k in kinds if k["name"] == "Vacation"), None) or (
        await org.admin.gql('mutation { addAbsenceType(name: "Vacation") { id } }')
    )["addAbsenceType"]["id"]
    await org.admin.gql(
        "mutation($s: SvcTimestamp!, $p: SvcId!, $a: SvcId) { addTimeRecord(startTime: $s,"
        " duration: 28800000, personId: $p, absenceId: $a) { id } }",
        {"s": start_ms, "p": person.id, "a": kind})


async def escalations(org: Org, now_ms: int) -> list[str]:
    """The escalation pass's plans at `now_ms`: the reasons of those that ask the
    administrators."""
    org.live.clock.set(now_ms)
    return [p.reason for p in await jobs(org).escalator.plans(org.id) if p.kind == ESCALATION]


async def test_a_berlin_approver_is_away_from_midnight_in_berlin(org: Org) -> None:
    org.live.clock.set(MONDAY + 10 * HOUR_MS)
    owner = await org.add_member("Olive Owner")
    grace = await org.add_member("Grace Hopper", "manager")
    await in_zone(org, (grace, BERLIN))
    await set_stages(org, (grace,))
    await day_off(org, grace, ms(2026, 12, 3, 9, zone=BERLIN))  # Thursday, 09:00 in Berlin
    await submitted(org, owner)
    away = "Grace Hopper is away until Thu 03 Dec 2026"
    # Tuesday 23:30 UTC, Wednesday 00:30 in Berlin: her day off is tomorrow
    assert await escalations(org, WEDNESDAY - 30 * 60_000) == []
    assert await escalations(org, WEDNESDAY + 12 * HOUR_MS) == []
    # Wednesday 23:30 UTC, Thursday 00:30 in Berlin: away (UTC's Wednesday still)
    [reason] = await escalations(org, THURSDAY - 30 * 60_000)
    assert reason.startswith(away)
    assert (await escalations(org, THURSDAY + 22 * HOUR_MS))[0].startswith(away)
    # Thursday 23:30 UTC, Friday 00:30 in Berlin: back
    assert await escalations(org, THURSDAY + DAY_MS - 30 * 60_000) == []


async def test_a_day_off_from_midnight_in_berlin_is_not_the_utc_day_before(org: Org) -> None:
    """A day off recorded from 00:00 in Berlin starts at 23:00 UTC the day before: that UTC
    day is no day off of hers."""
    org.live.clock.set(MONDAY + 10 * HOUR_MS)
    owner = await org.add_member("Olive Owner")
    hedy = await org.add_member("Hedy Lamarr", "manager")
    await in_zone(org, (hedy, BERLIN))
    await set_stages(org, (hedy,))
    await day_off(org, hedy, ms(2026, 12, 3, 0, zone=BERLIN))
    await submitted(org, owner)
    assert await escalations(org, WEDNESDAY + 12 * HOUR_MS) == []
    [reason] = await escalations(org, THURSDAY + 12 * HOUR_MS)
    assert reason.startswith("Hedy Lamarr is away until Thu 03 Dec 2026")


async def test_a_new_york_approver_is_away_until_midnight_in_new_york(org: Org) -> None:
    org.live.clock.set(MONDAY + 10 * HOUR_MS)
    owner = await org.add_member("Olive Owner")
    nora = await org.add_member("Nora York", "manager")
    await in_zone(org, (nora, NEW_YORK))
    await set_stages(org, (nora,))
    await day_off(org, nora, ms(2026, 12, 2, 9, zone=NEW_YORK))  # Wednesday in New York
    await submitted(org, owner)
    # Thursday 01:00 UTC: Wednesday 20:00 in New York, her day off still
    [reason] = await escalations(org, THURSDAY + HOUR_MS)
    assert reason.startswith("Nora York is away until Wed 02 Dec 2026")
    assert await escalations(org, THURSDAY + 5 * HOUR_MS + 30 * 60_000) == []  # 00:30 there
    assert await escalations(org, WEDNESDAY + 4 * HOUR_MS) == []  # Tuesday 23:00 there


async def test_the_delay_counts_the_owners_days_in_the_owners_zone(org: Org) -> None:
    """Olive works in Berlin; a holiday of hers on Monday 7 December (Berlin's day) moves
    the delay's one working day from Friday to Tuesday, at the same time of day."""
    org.live.clock.set(MONDAY + 4 * DAY_MS + 10 * HOUR_MS)  # Friday 4 December, 10:00 UTC
    owner = await org.add_member("Olive Owner")
    grace = await org.add_member("Grace Hopper", "manager")
    await in_zone(org, (owner, BERLIN))
    await set_stages(org, (grace,))
    for day in (4, 7, 8):
        await day_off(org, grace, MONDAY + day * DAY_MS + 9 * HOUR_MS)
    await submitted(org, owner)
    await org.admin.gql(
        "mutation($p: SvcId!, $d: SvcTimestamp!) { addPersonPublicHoliday(id: $p, holiday: "
        '{name: "Mine", date: $d, disabled: false}) { id } }',
        {"p": owner.id, "d": MONDAY + 7 * DAY_MS + 12 * HOUR_MS})
    [plan] = [p for p in await jobs(org).escalator.plans(org.id) if p.kind == ESCALATION]
    assert plan.due_ms == MONDAY + 8 * DAY_MS + 10 * HOUR_MS  # Tuesday 10:00 UTC


class Counted(httpx.AsyncBaseTransport):
    """Loopback HTTP to the live server, each GraphQL request's operation noted."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.sent: list[tuple[str, dict[str, object]]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(await request.aread())
        self.sent.append((str(body["query"]).split("(")[0].split("{")[0].strip(),
                          dict(body.get("variables") or {})))
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def requests_of_a_pass(org: Org, approvers: int) -> list[tuple[str, dict[str, object]]]:
    """The requests of one escalation pass over HTTP (a hosted service's way), a stage of
    `approvers` approvers in three time zones, all on time off today."""
    org.live.clock.set(MONDAY + 10 * HOUR_MS)
    owner = await org.add_member("Olive Owner")
    people = [await org.add_member(f"Approver {i}", "manager") for i in range(approvers)]
    zones = [BERLIN, NEW_YORK, "UTC"]
    await in_zone(org, *((p, zones[i % 3]) for i, p in enumerate(people)))
    await set_stages(org, tuple(people))
    for i, person in enumerate(people):
        await day_off(org, person, ms(2026, 11, 30, 9, zone=zones[i % 3]))
    await submitted(org, owner)
    transport = Counted()
    client = ServiceClient(org.live.graphql_url, http_transport=transport)
    try:
        await client.offers("SvcPerson", "scheduledDays", apikey=org.admin.apikey)
        await client.offers("SvcTimeSettings", "approvalEscalationDelay",
                            apikey=org.admin.apikey)
        transport.sent.clear()  # (what a client asks once in its life)
        escalator = Escalator(replace(runtime_of(org), client=client),
                              jobs(org).escalator.reviews)
        [plan] = await escalator.plans(org.id)
        assert plan.kind == ESCALATION and plan.reason.count(" is away until ") == approvers
    finally:
        await client.close()
    return transport.sent


async def test_the_pass_reads_all_approvers_in_one_request(org: Org) -> None:
    three = await requests_of_a_pass(org, 3)
    other = await new_org(org.live, org.admin.gql.http)
    one = await requests_of_a_pass(other, 1)
    assert [name for name, _ in three] == [name for name, _ in one]
    assert len(three) == 9, three
    facts = [variables for name, variables in three if name == "query AwayFacts"]
    # the stage's approvers (time off, time zones, planned days), then the administrators
    assert [len(v["ids"]) for v in facts] == [3, 1]  # type: ignore[arg-type]
    # of the people, only the owner's reminder setting and the administrators (issue #26)
    reminders = [v for name, v in three if name == "query EscalationReminders"]
    assert [len(v["page"]) for v in reminders] == [1]  # type: ignore[arg-type]
    [admins] = [v for name, v in three if name == "query EscalationAdmins"]
    assert list(admins) == ["role"] and admins["role"][0]["roleId"]  # type: ignore[index]


def test_the_days_are_the_approvers_own() -> None:
    late = THURSDAY - 30 * 60_000  # Wednesday 23:30 UTC, Thursday 00:30 in Berlin
    records = [{"startTime": {"ts": ms(2026, 12, 3, 0, zone=BERLIN)}, "absence": {"id": "v"}},
               {"startTime": {"ts": ms(2026, 12, 2, 21, zone=NEW_YORK)}, "absence": {"id": "v"}},
               {"startTime": {"ts": WEDNESDAY}, "absence": None}]
    assert days_off(records, BERLIN) == {date(2026, 12, 3)}
    assert days_off(records, "UTC") == {date(2026, 12, 2), date(2026, 12, 3)}
    assert days_off(records, NEW_YORK) == {date(2026, 12, 2)}
    # the window read holds every zone's today: from UTC's yesterday on
    start, end = read_window(late)
    assert start == WEDNESDAY - DAY_MS and end == THURSDAY + 32 * DAY_MS
    for now in (WEDNESDAY, late):
        for zone in ("Pacific/Kiritimati", "Etc/GMT+12"):  # UTC+14, UTC-12
            today = local_date(now, zone)
            assert read_window(now)[0] <= ms(today.year, today.month, today.day, 0, zone=zone)
    # one person's facts from the service's answer, dated in their zone
    berlin = {"localisation": {"timeZone": {"value": BERLIN}}}
    [off] = person_facts("o", "g", [], records[:1], berlin, late)
    assert (off.source, off.until, off.zone) == ("time-off", date(2026, 12, 3), BERLIN)
    assert person_facts("o", "g", [], records[:1], berlin, late - DAY_MS) == []
    # no time zone, or one unknown here: UTC's days (23:00 UTC on Wednesday is Wednesday)
    unknown = {"localisation": {"timeZone": {"value": "Mars/Olympus"}}}
    for person in ({"localisation": None}, unknown, None):
        [utc] = person_facts("o", "g", [], records[:1], person, late)
        assert (utc.until, utc.zone) == (date(2026, 12, 2), "UTC")
    replied = Absence("o", "g", "auto-reply", date(2026, 12, 2), WEDNESDAY)
    [kept] = person_facts("o", "g", [replied], [], berlin, late)
    assert kept.zone == BERLIN and not away_now(kept, late)  # Thursday in Berlin
    assert away_now(replace(kept, zone=NEW_YORK), THURSDAY + HOUR_MS)  # Wednesday 20:00
    assert is_away(kept, date(2026, 12, 2), late)  # the rule itself: the date given
    # a holiday is the approver's date too (Monday 7 December in New York)
    planned = {date(2026, 12, 7): False}
    [holiday] = service_absences("o", "n", set(), planned, date(2026, 12, 7), 0, NEW_YORK)
    assert (holiday.source, holiday.until, holiday.zone) == (
        "schedule", date(2026, 12, 7), NEW_YORK)
    # working days counted in a zone: the same local time, across the end of summer time
    friday = ms(2026, 10, 23, 10, zone=BERLIN)
    assert add_working_days(friday, 1, None, BERLIN) == ms(2026, 10, 26, 10, zone=BERLIN)
    assert add_working_days(friday, 1) == friday + 3 * DAY_MS  # UTC: 24-hour days
    saturday_early = ms(2026, 12, 5, 0, 30, zone=BERLIN)  # Friday 23:30 UTC
    assert add_working_days(saturday_early, 1, None, BERLIN) == ms(2026, 12, 8, 0, zone=BERLIN)
    assert add_working_days(saturday_early, 1) == ms(2026, 12, 7, 23, 30)
    assert add_working_days(friday, 1, {date(2026, 10, 26): False}, BERLIN) == ms(
        2026, 10, 27, 10, zone=BERLIN)
