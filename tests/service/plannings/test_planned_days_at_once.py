"""getPersons asked for its people's planned days reads the schedule timeline of the whole page
in a few statements (`remember_timelines_of`: the people's entries, their tags', the
organisation's), not one a person (issue #40: a reminder run's pages asked each person's
`scheduledDays`, the one statement a reminder left). Each person's days are the ones getPerson
gives them alone: their own entry, else their nearest tag's (an archived tag's not), else the
organisation's."""

from __future__ import annotations

from service.plannings.models import ScheduleTimelineEntry, ScheduleType
from tests.service.plannings.test_schedules import MONDAY, add_schedule
from tests.statement_counter import statements
from tests.support import DAY_MS, HOUR_MS, Org

DAYS = (f"scheduledDays(startTime: {MONDAY}, endTime: {MONDAY + 14 * DAY_MS}) "
        "{ date { ts } duration workingDay wfh scheduleType { name } } "
        f"expectedTime(startTime: {MONDAY}, endTime: {MONDAY + 7 * DAY_MS})")
PEOPLE = f"query {{ getPersons {{ id name {DAYS} }} }}"
ONE = f"query($id: SvcId!) {{ getPerson(id: $id) {{ id name {DAYS} }} }}"
TAG_PERSON = "mutation($t: SvcId!, $p: SvcId!) { tagPerson(tagId: $t, personId: $p) { id } }"


def reads_of(sql: list[str], table: str) -> int:
    return sum(1 for statement in sql if f"FROM {table}" in " ".join(statement.split()))


async def _page(org: Org) -> tuple[list[dict[str, object]], list[str]]:
    service = org.live.service
    async with statements([service.engine, service.read_engine]) as seen:
        listed = (await org.admin.gql(PEOPLE))["getPersons"]
    return listed, seen.sql


async def test_a_page_of_people_reads_their_schedule_timelines_at_once(org: Org) -> None:
    full = await add_schedule(org, "Full time", [8, 8, 8, 8, 8])
    part = await add_schedule(org, "Part time", [4, 4, 4])
    weekend = await add_schedule(org, "Weekend", [0, 0, 0, 0, 0, 10, 10])
    await org.admin.gql("mutation($s: SvcId!) { assignScheduleTimelineToOrganisation("
                        "scheduleTypeId: $s) { sourceKey } }", {"s": full})
    await org.admin.gql("mutation($s: SvcId!, $t: SvcTimestamp) { "
                        "assignScheduleTimelineToOrganisation(scheduleTypeId: $s, startTime: $t) "
                        "{ sourceKey } }", {"s": weekend, "t": MONDAY + 7 * DAY_MS})
    halves, gone = [
        (await org.admin.gql(f'mutation {{ addTag(name: "{name}") {{ id }} }}'))["addTag"]["id"]
        for name in ("Halves", "Gone")]
    for tag in (halves, gone):
        await org.admin.gql("mutation($t: SvcId!, $s: SvcId!) { assignScheduleTimelineToTag("
                            "tagId: $t, scheduleTypeId: $s) { id } }",
                            {"t": tag, "s": part if tag == halves else weekend})
    members = [await org.add_member(f"Sam Scheduled{index}") for index in range(4)]
    await org.admin.gql(TAG_PERSON, {"t": halves, "p": members[0].id})
    await org.admin.gql(TAG_PERSON, {"t": halves, "p": members[1].id})
    await org.admin.gql(TAG_PERSON, {"t": gone, "p": members[2].id})
    await org.admin.gql("mutation($id: SvcId!) { archiveTag(id: $id) { id } }", {"id": gone})
    await org.admin.gql("mutation($p: SvcId!, $s: SvcId!, $t: SvcTimestamp) { "
                        "assignScheduleTimelineToPerson(personId: $p, scheduleTypeId: $s, "
                        "startTime: $t) { id } }", {"p": members[1].id, "s": weekend, "t": MONDAY})

    listed, sql = await _page(org)
    timeline, types = ScheduleTimelineEntry.__tablename__, ScheduleType.__tablename__
    # the people's entries, their tags', the organisation's; the types they name
    assert (reads_of(sql, timeline), reads_of(sql, types)) == (3, 1), "\n".join(sql)
    expected = {person["id"]: person["expectedTime"] for person in listed}
    assert [expected[member.id] for member in members] == [
        12 * HOUR_MS,  # the tag's part time
        20 * HOUR_MS,  # their own weekend schedule, which wins over the tag's
        40 * HOUR_MS,  # the archived tag's weekend does not count: the organisation's
        40 * HOUR_MS]
    second_week = {person["id"]: person["scheduledDays"][7]["scheduleType"]
                   for person in listed}
    assert second_week[members[3].id] == {"name": "Weekend"}  # the organisation's, from then
    for person in listed:  # each as it reads alone
        alone = (await org.admin.gql(ONE, {"id": person["id"]}))["getPerson"]
        assert alone == person

    for index in range(4, 10):  # more people: not one statement more
        await org.add_member(f"Sam Scheduled{index}")
    more, more_sql = await _page(org)
    assert len(more) == len(listed) + 6
    assert (reads_of(more_sql, timeline), reads_of(more_sql, types)) == (3, 1)

    async with statements([org.live.service.engine, org.live.service.read_engine]) as names:
        await org.admin.gql("query { getPersons { id name } }")
    assert reads_of(names.sql, timeline) == 0, "\n".join(names.sql)
