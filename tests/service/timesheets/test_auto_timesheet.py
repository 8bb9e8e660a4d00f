"""The automatic timesheet over GraphQL: the settings name a task category and its start and
end statuses; moving an owned task through them (editTaskStatus, moveTasksToStatus, addTask
with a status) under a test clock yields suggested entries (extension field
SvcPerson.suggestedTimeRecords), less the time already recorded, and none when it is off."""

from __future__ import annotations

from typing import Any

from tests.service.auto_timesheet_support import (
    ADD,
    DISABLE,
    OWN,
    RECORD,
    STATUS,
    auto_board,
    owned_task,
    worked,
)
from tests.support import DAY_MS, HOUR_MS, Member, Org

WEEK = 1_791_158_400_000  # Mon 5 Oct 2026 00:00 UTC
WEEK_END = WEEK + 7 * DAY_MS

SUGGESTED = """query($id: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { getPerson(id: $id) {
  suggestedTimeRecords(startTime: $s, endTime: $e) {
    taskId task { name } day startTime { ts } duration } } }"""


async def suggested(member: Member, reader: Member | None = None) -> list[dict[str, Any]]:
    data = await (reader or member).gql(SUGGESTED, {"id": member.id, "s": WEEK, "e": WEEK_END})
    return list(data["getPerson"]["suggestedTimeRecords"])


async def test_a_task_moved_through_its_statuses_is_suggested(org: Org) -> None:
    clock, admin = org.live.clock, org.admin
    clock.set(WEEK)
    sam = await org.add_member("Sam Staff")
    board = await auto_board(org)
    assert board.shown["timesheetEndStatusId"] == board.done
    assert board.shown["timesheetEndStatus"] == {"name": "Done"}

    build = await owned_task(org, board, sam, "Build")
    other = (await admin.gql(ADD, {"n": "Not mine", "s": board.todo}))["addTask"]["id"]
    await admin.gql(STATUS, {"id": other, "s": board.doing})
    await worked(org, board, build, WEEK + 10 * HOUR_MS, WEEK + 15 * HOUR_MS)  # Monday
    clock.set(WEEK + DAY_MS + 9 * HOUR_MS)  # Tuesday 9:00: a task added in progress
    test = (await admin.gql(ADD, {"n": "Test", "s": board.doing}))["addTask"]["id"]
    await admin.gql(OWN, {"t": test, "p": sam.id})
    await sam.gql(RECORD, {"s": WEEK + 11 * HOUR_MS, "d": HOUR_MS, "p": sam.id, "t": build})
    clock.set(WEEK + DAY_MS + 12 * HOUR_MS)  # Tuesday noon

    assert await suggested(sam) == [
        {"taskId": build, "task": {"name": "Build"}, "day": "2026-10-05",
         "startTime": {"ts": WEEK + 10 * HOUR_MS}, "duration": 4 * HOUR_MS},  # 5h less 1h
        {"taskId": test, "task": {"name": "Test"}, "day": "2026-10-06",
         "startTime": {"ts": WEEK + DAY_MS + 9 * HOUR_MS}, "duration": 3 * HOUR_MS},
    ]
    assert len(await suggested(sam, admin)) == 2
    eve = await org.add_member("Eve Else")
    assert await eve.gql.denied(SUGGESTED, {"id": sam.id, "s": WEEK, "e": WEEK_END})
    message = await sam.gql.error(SUGGESTED, {"id": sam.id, "s": WEEK_END, "e": WEEK})
    assert "endTime" in message

    await admin.gql(DISABLE, {"id": sam.id})
    assert await suggested(sam) == []
