"""The automatic timesheet over GraphQL: the settings name a task category and its start and
end statuses; moving an owned task through them (editTaskStatus, moveTasksToStatus, addTask
with a status) under a test clock yields suggested entries (extension field
SvcPerson.suggestedTimeRecords), less the time already recorded, and none when it is off."""

from __future__ import annotations

from typing import Any

from tests.support import DAY_MS, HOUR_MS, Member, Org

WEEK = 1_791_158_400_000  # Mon 5 Oct 2026 00:00 UTC
WEEK_END = WEEK + 7 * DAY_MS

SUGGESTED = """query($id: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { getPerson(id: $id) {
  suggestedTimeRecords(startTime: $s, endTime: $e) { taskId task { name } day startTime { ts } duration }
} }"""
SETTINGS = """mutation($on: Boolean, $auto: [SvcAutoTimesheetEntryInput]) {
  editOrganisationTimeSettingsEnableAutoTimesheet(enableAutoTimesheet: $on) { id }
  editOrganisationTimeSettingsAutoTimesheet(autoTimesheet: $auto) {
    timeSettings { autoTimesheet { value { categoryId timesheetStartStatusId
      timesheetEndStatusId timesheetEndStatus { name } } } } } }"""
ADD = """mutation($n: SvcName!, $s: SvcId) { addTask(name: $n, statusId: $s) { id } }"""
OWN = """mutation($t: SvcId!, $p: SvcId!) { assignOwnerOfTask(taskId: $t, personId: $p) { id } }"""
STATUS = """mutation($id: SvcId!, $s: SvcId!) { editTaskStatus(id: $id, statusId: $s) { id } }"""
MOVE = """mutation($ids: [SvcId]!, $s: SvcId!) {
  moveTasksToStatus(taskIds: $ids, targetStatusId: $s, orderedTaskIds: []) { id } }"""


async def suggested(member: Member, reader: Member | None = None) -> list[dict[str, Any]]:
    data = await (reader or member).gql(SUGGESTED, {"id": member.id, "s": WEEK, "e": WEEK_END})
    return list(data["getPerson"]["suggestedTimeRecords"])


async def test_a_task_moved_through_its_statuses_is_suggested(org: Org) -> None:
    clock, admin = org.live.clock, org.admin
    clock.set(WEEK)
    sam = await org.add_member("Sam Staff")
    board = (await admin.gql('mutation { addTaskCategory(name: "Board") { id statuses { id } } }'
                             ))["addTaskCategory"]
    todo, doing, done = (s["id"] for s in board["statuses"])
    entry = {"categoryId": board["id"], "timesheetStartStatusId": doing,
             "timesheetEndStatusId": done}
    shown = await admin.gql(SETTINGS, {"on": True, "auto": [entry]})
    [value] = shown["editOrganisationTimeSettingsAutoTimesheet"]["timeSettings"][
        "autoTimesheet"]["value"]
    assert value["timesheetEndStatusId"] == done and value["timesheetEndStatus"]["name"] == "Done"

    build = (await admin.gql(ADD, {"n": "Build", "s": todo}))["addTask"]["id"]
    other = (await admin.gql(ADD, {"n": "Not mine", "s": todo}))["addTask"]["id"]
    await admin.gql(OWN, {"t": build, "p": sam.id})
    clock.set(WEEK + 10 * HOUR_MS)  # Monday 10:00: work starts
    await admin.gql(STATUS, {"id": build, "s": doing})
    await admin.gql(STATUS, {"id": other, "s": doing})
    clock.set(WEEK + 15 * HOUR_MS)  # Monday 15:00: done
    await admin.gql(MOVE, {"ids": [build], "s": done})
    clock.set(WEEK + DAY_MS + 9 * HOUR_MS)  # Tuesday 9:00: a task added in progress
    test = (await admin.gql(ADD, {"n": "Test", "s": doing}))["addTask"]["id"]
    await admin.gql(OWN, {"t": test, "p": sam.id})
    await sam.gql(
        "mutation($s: SvcTimestamp!, $p: SvcId!, $t: SvcId) { addTimeRecord(startTime: $s,"
        " duration: 3600000, personId: $p, taskId: $t) { id } }",
        {"s": WEEK + 11 * HOUR_MS, "p": sam.id, "t": build},
    )
    clock.set(WEEK + DAY_MS + 12 * HOUR_MS)  # Tuesday noon

    assert await suggested(sam) == [
        {"taskId": build, "task": {"name": "Build"}, "day": "2026-10-05",
         "startTime": {"ts": WEEK + 10 * HOUR_MS}, "duration": 4 * HOUR_MS},  # 5h less 1h recorded
        {"taskId": test, "task": {"name": "Test"}, "day": "2026-10-06",
         "startTime": {"ts": WEEK + DAY_MS + 9 * HOUR_MS}, "duration": 3 * HOUR_MS},
    ]
    assert len(await suggested(sam, admin)) == 2
    eve = await org.add_member("Eve Else")
    assert await eve.gql.denied(SUGGESTED, {"id": sam.id, "s": WEEK, "e": WEEK_END})
    message = await sam.gql.error(SUGGESTED, {"id": sam.id, "s": WEEK_END, "e": WEEK})
    assert 'endTime' in message

    await admin.gql("mutation($id: SvcId!) { editPersonTimeSettingsEnableAutoTimesheet("
                    "id: $id, enableAutoTimesheet: false) { id } }", {"id": sam.id})
    assert await suggested(sam) == []
