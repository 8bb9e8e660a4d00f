"""Set-up shared by the automatic timesheet's tests: a task board whose "In progress" to "Done"
fills the timesheet, and tasks moved through it under the test clock."""

from __future__ import annotations

from dataclasses import dataclass

from tests.support import Member, Org

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
DISABLE = """mutation($id: SvcId!) { editPersonTimeSettingsEnableAutoTimesheet(
  id: $id, enableAutoTimesheet: false) { id } }"""
RECORD = """mutation($s: SvcTimestamp!, $d: Int!, $p: SvcId!, $t: SvcId) {
  addTimeRecord(startTime: $s, duration: $d, personId: $p, taskId: $t) { id } }"""


@dataclass(frozen=True)
class Board:
    category_id: str
    todo: str
    doing: str
    done: str
    shown: dict[str, object]  # the autoTimesheet entry as the mutation returned it


async def auto_board(org: Org) -> Board:
    """A "Board" category whose In progress to Done fills the timesheet, on for the account."""
    board = (await org.admin.gql(
        'mutation { addTaskCategory(name: "Board") { id statuses { id } } }'))["addTaskCategory"]
    todo, doing, done = (s["id"] for s in board["statuses"])
    entry = {"categoryId": board["id"], "timesheetStartStatusId": doing,
             "timesheetEndStatusId": done}
    data = await org.admin.gql(SETTINGS, {"on": True, "auto": [entry]})
    [shown] = data["editOrganisationTimeSettingsAutoTimesheet"]["timeSettings"][
        "autoTimesheet"]["value"]
    return Board(board["id"], todo, doing, done, shown)


async def owned_task(org: Org, board: Board, owner: Member, name: str,
                     status: str | None = None) -> str:
    task = str((await org.admin.gql(ADD, {"n": name, "s": status or board.todo}))["addTask"]["id"])
    await org.admin.gql(OWN, {"t": task, "p": owner.id})
    return task


async def worked(org: Org, board: Board, task: str, start_ms: int, end_ms: int) -> None:
    """The task enters In progress at start_ms (editTaskStatus) and Done at end_ms
    (moveTasksToStatus), by the test clock."""
    org.live.clock.set(start_ms)
    await org.admin.gql(STATUS, {"id": task, "s": board.doing})
    org.live.clock.set(end_ms)
    await org.admin.gql(MOVE, {"ids": [task], "s": board.done})
