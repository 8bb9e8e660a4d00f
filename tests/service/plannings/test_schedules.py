"""Work schedules over POST /graphql: schedule types, their timeline on the organisation, tags
and persons, the planned days that result, and the out-of-schedule time setting."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from plumbing.db import unit_of_work
from service.models import AuditTrail
from tests.support import DAY_MS, GQL, HOUR_MS, Member, Org

MONDAY = 1_773_619_200_000  # 2026-03-16T00:00:00Z
FIELDS = "id name archived color length calendarStartTime { ts } days { duration wfh timePairs }"
ADD = f"""mutation($n: SvcName!, $s: SvcTimestamp!) {{
  addScheduleType(name: $n, calendarStartTime: $s) {{ {FIELDS} }} }}"""
DAYS = """query($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { getPerson(id: $p) {
  scheduledDays(startTime: $s, endTime: $e) { date { ts } duration workingDay holiday wfh
    scheduleType { name } }
  expectedTime(startTime: $s, endTime: $e) } }"""


async def add_schedule(org: Org, name: str, hours: list[float]) -> str:
    """A weekly schedule starting on MONDAY with those hours per day (Mon first)."""
    made = (await org.admin.gql(ADD, {"n": name, "s": MONDAY}))["addScheduleType"]
    for number, value in enumerate(hours):
        if value:
            await day_edit(org.admin, "editScheduleTypeDayDuration", made["id"], number,
                           "duration: $v", "Int!", int(value * HOUR_MS))
    return str(made["id"])


async def day_edit(who: Member, field: str, id: str, day: int, argument: str, kind: str,
                   value: Any) -> Any:
    declared, passed = (f", $v: {kind}", f", {argument}") if argument else ("", "")
    return await who.gql(
        f"mutation($id: SvcId!, $d: Int!{declared}) {{ {field}(id: $id, dayNumber: $d"
        f"{passed}) {{ {FIELDS} }} }}",
        {"id": id, "d": day, **({"v": value} if argument else {})})


async def planned(who: GQL, person: str, start: int, days: int) -> dict[str, Any]:
    return (await who(DAYS, {"p": person, "s": start, "e": start + days * DAY_MS}))[
        "getPerson"]


async def test_schedule_type_days_and_validation(org: Org) -> None:
    made = (await org.admin.gql(ADD, {"n": "Office", "s": MONDAY}))["addScheduleType"]
    assert made["length"] == 7 and made["calendarStartTime"] == {"ts": MONDAY}
    assert made["days"][0] == {"duration": 0, "wfh": False, "timePairs": []}
    sid = made["id"]
    pairs = [[9 * HOUR_MS, 12 * HOUR_MS], [13 * HOUR_MS, 17 * HOUR_MS]]
    edited = await day_edit(org.admin, "editScheduleTypeDayTimePairs", sid, 0,
                            "timePairs: $v", "[[Int]]!", pairs)
    assert edited["editScheduleTypeDayTimePairs"]["days"][0] == {
        "duration": 7 * HOUR_MS, "wfh": False, "timePairs": pairs}
    wfh = await day_edit(org.admin, "editScheduleTypeDayWfh", sid, 4, "wfh: $v", "Boolean!",
                         True)
    assert wfh["editScheduleTypeDayWfh"]["days"][4]["wfh"] is True
    dup = await day_edit(org.admin, "editScheduleTypeDayDuplicate", sid, 0, "", "", None)
    days = dup["editScheduleTypeDayDuplicate"]["days"]
    assert len(days) == 8 and days[1] == days[0]
    cleared = await day_edit(org.admin, "editScheduleTypeDayClear", sid, 1, "", "", None)
    assert cleared["editScheduleTypeDayClear"]["days"][1]["duration"] == 0
    length = await org.admin.gql("mutation($id: SvcId!) { editScheduleTypeLength(id: $id, "
                                 "length: 7) { length days { duration } } }", {"id": sid})
    assert length["editScheduleTypeLength"]["length"] == 7

    # bad input names the argument, and nothing is written
    assert "dayNumber" in await org.admin.gql.error(
        "mutation($id: SvcId!) { editScheduleTypeDayDuration(id: $id, dayNumber: 7, "
        "duration: 1) { id } }", {"id": sid})
    message = await org.admin.gql.error(
        "mutation($id: SvcId!, $p: [[Int]]!) { editScheduleTypeDayTimePairs(id: $id, "
        "dayNumber: 0, timePairs: $p) { id } }",
        {"id": sid, "p": [[13 * HOUR_MS, 17 * HOUR_MS], [9 * HOUR_MS, 12 * HOUR_MS]]})
    assert "timePairs[1]" in message
    assert "timePairs[0]" in await org.admin.gql.error(
        "mutation($id: SvcId!, $p: [[Int]]!) { editScheduleTypeDayTimePairs(id: $id, "
        "dayNumber: 0, timePairs: $p) { id } }", {"id": sid, "p": [[5, 2 * DAY_MS]]})
    assert "length" in await org.admin.gql.error(
        "mutation($id: SvcId!) { editScheduleTypeLength(id: $id, length: 0) { id } }",
        {"id": sid})
    assert "duration" in await org.admin.gql.error(
        "mutation($id: SvcId!) { editScheduleTypeDayDuration(id: $id, dayNumber: 0, "
        "duration: -1) { id } }", {"id": sid})

    copy = await org.admin.gql("mutation($id: SvcId!) { duplicateScheduleType(id: $id, "
                               "name: \"Copy\") { id days { duration } } }", {"id": sid})
    assert copy["duplicateScheduleType"]["days"][0]["duration"] == 7 * HOUR_MS
    await org.admin.gql("mutation($id: SvcId!) { archiveScheduleType(id: $id) { id } }",
                        {"id": sid})
    listed = await org.admin.gql("{ getScheduleTypes { name } countScheduleTypes "
                                 "all: getScheduleTypes(archived: true) { name } }")
    assert listed["getScheduleTypes"] == [{"name": "Copy"}] and listed["countScheduleTypes"] == 1
    assert {item["name"] for item in listed["all"]} == {"Copy", "Office"}
    filtered = await org.admin.gql(
        '{ getScheduleTypes(filter: [{name: "off"}], archived: true) { name } }')
    assert filtered["getScheduleTypes"] == [{"name": "Office"}]
    await org.admin.gql("mutation($id: SvcId!) { deleteScheduleType(id: $id) { id } }",
                        {"id": copy["duplicateScheduleType"]["id"]})
    assert (await org.admin.gql("{ countScheduleTypes(archived: true) }"))[
        "countScheduleTypes"] == 1

    async with unit_of_work(org.live.service.sessions) as session:
        audited = await session.scalar(select(func.count()).select_from(AuditTrail).where(
            AuditTrail.organisation_id == org.id,
            AuditTrail.operation_name.like("%ScheduleType%")))
    assert audited and audited >= 9


async def test_employees_read_but_do_not_edit_schedules(org: Org) -> None:
    sid = await add_schedule(org, "Office", [8, 8, 8, 8, 8])
    bob = await org.add_member("Bob")
    assert (await bob.gql("{ getScheduleTypes { name } }"))["getScheduleTypes"] == [
        {"name": "Office"}]
    assert await bob.gql.denied(ADD, {"n": "Mine", "s": MONDAY}) == ["Mutation.addScheduleType"]
    assert await bob.gql.denied(
        "mutation($s: SvcId!) { assignScheduleTimelineToOrganisation(scheduleTypeId: $s) "
        "{ id } }", {"s": sid}) == ["Mutation.assignScheduleTimelineToOrganisation"]
    assert await bob.gql.denied(
        "mutation($id: SvcId!) { editPersonTimeSettingsAllowTimeRecordOutOfScheduleDaily("
        "id: $id, allowTimeRecordOutOfScheduleDaily: false) { id } }", {"id": bob.id}) == [
        "Mutation.editPersonTimeSettingsAllowTimeRecordOutOfScheduleDaily"]
    ada = await org.add_member("Ada")
    assert "SvcPerson.scheduledDays" in await bob.gql.denied(
        DAYS, {"p": ada.id, "s": MONDAY, "e": MONDAY + DAY_MS})


async def test_timeline_most_specific_level_and_latest_start(org: Org) -> None:
    full = await add_schedule(org, "Full time", [8, 8, 8, 8, 8])
    part = await add_schedule(org, "Part time", [4, 4, 4])
    night = await add_schedule(org, "Weekend", [0, 0, 0, 0, 0, 10, 10])
    bob = await org.add_member("Bob")
    # no schedule anywhere: the default week, Monday to Friday 8 hours
    default = await planned(bob.gql, bob.id, MONDAY, 7)
    assert default["expectedTime"] == 40 * HOUR_MS
    assert [d["workingDay"] for d in default["scheduledDays"]] == [True] * 5 + [False] * 2
    assert default["scheduledDays"][0]["scheduleType"] is None

    assign_org = ("mutation($s: SvcId!, $t: SvcTimestamp) { assignScheduleTimelineToOrganisation("
                  "scheduleTypeId: $s, startTime: $t) { sourceKey targetKey startTime { ts } } }")
    relation = await org.admin.gql(assign_org, {"s": full, "t": None})
    assert relation["assignScheduleTimelineToOrganisation"] == {
        "sourceKey": "scheduleTimeline", "targetKey": "scheduleTimelineOfOrganisation",
        "startTime": None}
    await org.admin.gql(assign_org, {"s": part, "t": MONDAY + 7 * DAY_MS})
    two_weeks = await planned(org.admin.gql, bob.id, MONDAY, 14)
    assert two_weeks["expectedTime"] == 40 * HOUR_MS + 12 * HOUR_MS
    assert two_weeks["scheduledDays"][7]["scheduleType"] == {"name": "Part time"}

    tag = (await org.admin.gql('mutation { addTag(name: "Weekenders") { id } }'))["addTag"]["id"]
    await org.admin.gql("mutation($t: SvcId!, $p: SvcId!) { tagPerson(tagId: $t, personId: $p) "
                        "{ id } }", {"t": tag, "p": bob.id})
    await org.admin.gql("mutation($t: SvcId!, $s: SvcId!) { assignScheduleTimelineToTag("
                        "tagId: $t, scheduleTypeId: $s) { id } }", {"t": tag, "s": night})
    assert (await planned(bob.gql, bob.id, MONDAY, 7))["expectedTime"] == 20 * HOUR_MS
    await org.admin.gql("mutation($p: SvcId!, $s: SvcId!, $t: SvcTimestamp) { "
                        "assignScheduleTimelineToPerson(personId: $p, scheduleTypeId: $s, "
                        "startTime: $t) { id } }", {"p": bob.id, "s": part, "t": MONDAY})
    week = await planned(bob.gql, bob.id, MONDAY, 7)
    assert week["expectedTime"] == 12 * HOUR_MS
    # the day before the person's entry starts, the tag's is in force
    before = await planned(bob.gql, bob.id, MONDAY - DAY_MS, 1)
    assert before["scheduledDays"][0]["scheduleType"] == {"name": "Weekend"}

    seen = await org.admin.gql(
        "query($p: SvcId!, $s: SvcId!) { getPerson(id: $p) { relations { scheduleTimeline { "
        "value { name } startTime { ts } path { collection } } } } "
        "getScheduleType(id: $s) { relations { scheduleTimelineOfPerson { value { id } } "
        "scheduleTimelineOfOrganisation { startTime { ts } } } } "
        "currentOrganisation { relations { scheduleTimeline { value { name } } } } }",
        {"p": bob.id, "s": part})
    assert seen["getPerson"]["relations"]["scheduleTimeline"] == [
        {"value": {"name": "Part time"}, "startTime": {"ts": MONDAY},
         "path": [{"collection": "persons"}]}]
    assert seen["getScheduleType"]["relations"]["scheduleTimelineOfPerson"] == [
        {"value": {"id": bob.id}}]
    assert [e["value"]["name"] for e in seen["currentOrganisation"]["relations"][
        "scheduleTimeline"]] == ["Full time", "Part time"]

    await org.admin.gql("mutation($p: SvcId!, $s: SvcId!) { unassignScheduleTimelineFromPerson("
                        "personId: $p, scheduleTypeId: $s) { id } }", {"p": bob.id, "s": part})
    assert (await planned(bob.gql, bob.id, MONDAY, 7))["expectedTime"] == 20 * HOUR_MS
    await org.admin.gql("mutation($t: SvcId!) { resetTagScheduleTimelineRelations(tagId: $t) "
                        "{ id } }", {"t": tag})
    assert (await planned(bob.gql, bob.id, MONDAY, 7))["expectedTime"] == 40 * HOUR_MS
    assert "scheduleTypeId" in await org.admin.gql.error(
        "mutation($p: SvcId!, $s: SvcId!) { unassignScheduleTimelineFromPerson(personId: $p, "
        "scheduleTypeId: $s) { id } }", {"p": bob.id, "s": part})
    assert "endTime" in await bob.gql.error(DAYS, {"p": bob.id, "s": MONDAY, "e": MONDAY})


async def test_out_of_schedule_records_are_refused_when_the_setting_says_so(org: Org) -> None:
    sid = await add_schedule(org, "Mon-Thu", [8, 8, 8, 8])
    await org.admin.gql("mutation($s: SvcId!) { assignScheduleTimelineToOrganisation("
                        "scheduleTypeId: $s) { id } }", {"s": sid})
    bob = await org.add_member("Bob")
    add = ("mutation($p: SvcId!, $s: SvcTimestamp!) { addTimeRecord(personId: $p, "
           "startTime: $s, duration: 3600000) { id } }")
    friday = MONDAY + 4 * DAY_MS + 9 * HOUR_MS
    assert (await bob.gql(add, {"p": bob.id, "s": friday}))["addTimeRecord"]["id"]
    edit = ("mutation($id: SvcId, $v: Boolean) { editTagTimeSettingsAllowTimeRecordOutOfSchedule"
            "Daily(id: $id, allowTimeRecordOutOfScheduleDaily: $v) { id } }")
    assert "id" in await org.admin.gql.error(edit, {"id": "0123456789abcdef01234567", "v": False})
    await org.admin.gql("mutation { editOrganisationTimeSettingsAllowTimeRecordOutOfSchedule"
                        "Daily(allowTimeRecordOutOfScheduleDaily: false) { id } }")
    message = await bob.gql.error(add, {"p": bob.id, "s": friday})
    assert "out of the schedule" in message and "2026-03-20 is not a working day" in message
    assert (await bob.gql(add, {"p": bob.id, "s": MONDAY + 9 * HOUR_MS}))["addTimeRecord"]
    settings = await bob.gql("query($p: SvcId!) { getPerson(id: $p) { timeSettings { "
                             "allowTimeRecordOutOfScheduleDaily { value path { collection } } "
                             "} } }", {"p": bob.id})
    assert settings["getPerson"]["timeSettings"]["allowTimeRecordOutOfScheduleDaily"] == {
        "value": False, "path": [{"collection": "organisations"}]}
    # the person's own setting wins
    await org.admin.gql("mutation($id: SvcId!) { editPersonTimeSettingsAllowTimeRecordOutOf"
                        "ScheduleDaily(id: $id, allowTimeRecordOutOfScheduleDaily: true) "
                        "{ id } }", {"id": bob.id})
    assert (await bob.gql(add, {"p": bob.id, "s": friday}))["addTimeRecord"]["id"]


async def test_a_projects_own_setting_wins_for_its_entries(org: Org) -> None:
    sid = await add_schedule(org, "Mon-Thu", [8, 8, 8, 8])
    await org.admin.gql("mutation($s: SvcId!) { assignScheduleTimelineToOrganisation("
                        "scheduleTypeId: $s) { id } }", {"s": sid})
    bob = await org.add_member("Bob")
    projects = {}
    for name, parent in (("Support", None), ("Hotline", "Support"), ("Website", None)):
        data = await org.admin.gql(
            "mutation($n: SvcName!, $p: SvcId) { addProject(name: $n, parentId: $p) { id } }",
            {"n": name, "p": projects.get(parent or "")})
        projects[name] = data["addProject"]["id"]
    edit = ("mutation($id: SvcId!, $v: Boolean) { editProjectTimeSettingsAllowTimeRecordOutOf"
            "ScheduleDaily(id: $id, allowTimeRecordOutOfScheduleDaily: $v) { id timeSettings { "
            "allowTimeRecordOutOfScheduleDaily { value path { collection } } } } }")
    assert await bob.gql.denied(edit, {"id": projects["Support"], "v": True}) == [
        "Mutation.editProjectTimeSettingsAllowTimeRecordOutOfScheduleDaily"]
    edited = await org.admin.gql(edit, {"id": projects["Support"], "v": True})
    shown = edited["editProjectTimeSettingsAllowTimeRecordOutOfScheduleDaily"]["timeSettings"]
    assert shown["allowTimeRecordOutOfScheduleDaily"] == {
        "value": True, "path": [{"collection": "projects"}]}
    assert "id" in await org.admin.gql.error(edit, {"id": "0123456789abcdef01234567", "v": True})
    await org.admin.gql("mutation { editOrganisationTimeSettingsAllowTimeRecordOutOfSchedule"
                        "Daily(allowTimeRecordOutOfScheduleDaily: false) { id } }")
    add = ("mutation($p: SvcId!, $s: SvcTimestamp!, $pr: [SvcId]) { addTimeRecord(personId: $p, "
           "startTime: $s, duration: 3600000, projectIds: $pr) { id } }")
    friday = MONDAY + 4 * DAY_MS + 9 * HOUR_MS
    # the support hotline takes calls on Fridays: its parent's setting allows the entry
    assert (await bob.gql(add, {"p": bob.id, "s": friday, "pr": [projects["Hotline"]]}))
    message = await bob.gql.error(add, {"p": bob.id, "s": friday, "pr": [projects["Website"]]})
    assert "2026-03-20 is not a working day" in message
    await org.admin.gql(edit, {"id": projects["Hotline"], "v": False})  # its own says no
    message = await bob.gql.error(add, {"p": bob.id, "s": friday, "pr": [projects["Hotline"]]})
    assert "2026-03-20 is not a working day" in message
