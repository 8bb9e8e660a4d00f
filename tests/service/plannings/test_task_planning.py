"""A task's planning over POST /graphql on both databases: the owner's full-time percentage,
the end lock, the orders of children, of a category's top-level tasks and of a status's tasks,
a tag assignment's start; getPlannedVsRealReport; each refused for an employee."""

from __future__ import annotations

from typing import Any

from tests.service.projects.test_tasks import add as add_task
from tests.service.rates.test_billing_rates import add_project, add_tag
from tests.service.role_refusals import assert_employee_refused
from tests.service.spec_tables import load_implemented
from tests.service.time_records.test_time_records import MONDAY
from tests.support import DAY_MS, HOUR_MS, Org

OPERATIONS = ["editTaskFtePct", "editTaskEndLocked", "editAssignmentStartTime",
              "editTaskChildrenOrder", "editTaskCategoryChildrenOrder",
              "editCategoryStatusTaskOrder"]
REFERENCE = {op["name"]: op for op in load_implemented()}
FTE = """mutation($id: SvcId!, $pct: Float) { editTaskFtePct(id: $id, pct: $pct) {
  ftePct { value path { id collection } } } }"""
REPORT = """query($f: [SvcReportFilter], $c: SvcId, $s: SvcTimestamp!, $e: SvcTimestamp!,
  $split: String) { getPlannedVsRealReport(filters: $f, taskCategoryId: $c, startTime: $s,
  endTime: $e, periodSplit: $split) { periods planned real budgetSteps { ts quantity } } }"""


def test_the_operations_are_in_the_reference_list() -> None:
    assert [n for n in [*OPERATIONS, "getPlannedVsRealReport"] if n not in REFERENCE] == []


async def test_fte_end_lock_and_assignment_start(org: Org) -> None:
    gql = org.admin.gql
    task = (await add_task(org, "Build"))["id"]
    message = await gql.error(FTE, {"id": task, "pct": 50})
    assert "has no owner" in message and "assignOwnerOfTask" in message
    await gql("mutation($t: SvcId!, $p: SvcId!) { assignOwnerOfTask(taskId: $t, personId: $p) "
              "{ id } }", {"t": task, "p": org.admin.id})
    data = await gql(FTE, {"id": task, "pct": 50})
    assert data["editTaskFtePct"]["ftePct"] == {
        "value": 50.0, "path": [{"id": org.admin.id, "collection": "persons"}]}
    for bad in (0, 101, -5):
        assert (await gql.error(FTE, {"id": task, "pct": bad})).startswith(
            'Invalid argument "pct"')
    assert (await gql(FTE, {"id": task, "pct": None}))["editTaskFtePct"]["ftePct"] is None

    await gql("mutation($id: SvcId!) { editTaskPeriod(id: $id, startTime: 1000, endTime: 5000)"
              " { id } }", {"id": task})
    locked = await gql("mutation($id: SvcId!) { editTaskEndLocked(id: $id, endLocked: true) "
                       "{ endLocked } }", {"id": task})
    assert locked["editTaskEndLocked"] == {"endLocked": True}
    message = await gql.error("mutation($id: SvcId!) { editTaskEndTime(id: $id, endTime: 9000)"
                              " { id } }", {"id": task})
    assert "is locked" in message and "editTaskEndLocked" in message
    moved = await gql("mutation($id: SvcId!) { editTaskPeriod(id: $id, startTime: 2000) "
                      "{ startTime { ts } endTime { ts } } }", {"id": task})
    assert moved["editTaskPeriod"] == {"startTime": {"ts": 2000}, "endTime": {"ts": 5000}}
    await gql("mutation($id: SvcId!) { editTaskEndLocked(id: $id, endLocked: false) { id } }",
              {"id": task})
    await gql("mutation($id: SvcId!) { editTaskEndTime(id: $id, endTime: 9000) { id } }",
              {"id": task})

    tag = await add_tag(org, "Team")
    relation = (await gql("mutation($t: SvcId!, $p: SvcId!) { tagPerson(tagId: $t, "
                          "personId: $p) { id } }", {"t": tag, "p": org.admin.id}))["tagPerson"]
    edited = await gql("mutation($r: SvcId!) { editAssignmentStartTime(relationId: $r, "
                       "startTime: 86400000) { id sourceId targetId startTime { ts } } }",
                       {"r": relation["id"]})
    assert edited["editAssignmentStartTime"] == {
        "id": relation["id"], "sourceId": tag, "targetId": org.admin.id,
        "startTime": {"ts": 86400000}}
    message = await gql.error("mutation { editAssignmentStartTime(relationId: "
                              "\"eeeeeeeeeeeeeeeeeeeeeeee\", startTime: 1) { id } }")
    assert message.startswith('Invalid argument "relationId"')


async def test_orders(org: Org) -> None:
    gql = org.admin.gql
    category = (await gql("mutation { addTaskCategory(name: \"Board\") { id statuses { id } } }")
                )["addTaskCategory"]
    parent = (await add_task(org, "Parent", categoryId=category["id"]))["id"]
    a, b, c = [(await add_task(org, n, parentId=parent))["id"] for n in "ABC"]
    data = await gql("mutation($id: SvcId!, $ids: [SvcId]!) { editTaskChildrenOrder(id: $id, "
                     "childrenIds: $ids) { childrenIds } }", {"id": parent, "ids": [c, a]})
    assert data["editTaskChildrenOrder"]["childrenIds"] == [c, a, b]
    other = (await add_task(org, "Other", categoryId=category["id"]))["id"]
    message = await gql.error("mutation($id: SvcId!, $ids: [SvcId]!) { editTaskChildrenOrder("
                              "id: $id, childrenIds: $ids) { id } }",
                              {"id": parent, "ids": [a, other]})
    assert message.startswith('Invalid argument "childrenIds[1]"') and "not a child" in message
    message = await gql.error("mutation($id: SvcId!, $ids: [SvcId]!) { editTaskChildrenOrder("
                              "id: $id, childrenIds: $ids) { id } }",
                              {"id": parent, "ids": [a, a]})
    assert message.startswith('Invalid argument "childrenIds')

    ordered = await gql("mutation($id: SvcId!, $ids: [SvcId]!) { editTaskCategoryChildrenOrder("
                        "id: $id, childrenIds: $ids) { id } }",
                        {"id": category["id"], "ids": [other, parent]})
    assert ordered["editTaskCategoryChildrenOrder"] == {"id": category["id"]}
    message = await gql.error("mutation($id: SvcId!, $ids: [SvcId]!) { "
                              "editTaskCategoryChildrenOrder(id: $id, childrenIds: $ids) { id } }",
                              {"id": category["id"], "ids": [a]})
    assert "not a top-level task" in message

    status = category["statuses"][0]["id"]
    before = await gql("query { getTaskCategories { id statuses { id taskIds } } }")
    members = next(s for cat in before["getTaskCategories"] if cat["id"] == category["id"]
                   for s in cat["statuses"] if s["id"] == status)["taskIds"]
    wanted = list(reversed(members))
    data = await gql("mutation($s: SvcId!, $ids: [SvcId]!) { editCategoryStatusTaskOrder("
                     "statusId: $s, taskIds: $ids) { taskIds } }", {"s": status, "ids": wanted})
    assert data["editCategoryStatusTaskOrder"]["taskIds"] == wanted
    elsewhere = (await gql("mutation { addTaskCategory(name: \"Elsewhere\") { id } }")
                 )["addTaskCategory"]["id"]
    outsider = (await add_task(org, "Outsider", categoryId=elsewhere))["id"]
    message = await gql.error("mutation($s: SvcId!, $ids: [SvcId]!) { editCategoryStatusTaskOrder"
                              "(statusId: $s, taskIds: $ids) { id } }",
                              {"s": status, "ids": [outsider]})
    assert message.startswith('Invalid argument "taskIds[0]"') and "not in status" in message


async def test_planned_vs_real(org: Org) -> None:
    gql = org.admin.gql
    category = (await gql("mutation { addTaskCategory(name: \"Plan\") { id } }")
                )["addTaskCategory"]["id"]
    task = (await add_task(org, "Write", categoryId=category))["id"]
    # 20 hours of effort over two weeks from MONDAY: 10 planned each week
    await gql("mutation($id: SvcId!, $s: SvcTimestamp, $e: SvcTimestamp) { editTaskPeriod("
              "id: $id, startTime: $s, endTime: $e, effort: 1200) { id } }",
              {"id": task, "s": MONDAY, "e": MONDAY + 14 * DAY_MS})
    await gql("mutation($t: SvcId!) { addTaskBudget(taskId: $t, billingAmount: {value: 1, "
              "currency: \"EUR\"}, costAmount: {value: 1, currency: \"EUR\"}, quantity: 25) "
              "{ id } }", {"t": task})
    project = await add_project(org, "Books")
    await gql("mutation($t: SvcId!, $p: SvcId!) { assignTaskToProject(taskId: $t, "
              "projectId: $p) { id } }", {"t": task, "p": project})
    for day, hours in ((1, 3), (8, 4)):
        await gql("mutation($s: SvcTimestamp!, $d: Int!, $p: SvcId!, $t: SvcId, "
                  "$projects: [SvcId]) { addTimeRecord(startTime: $s, duration: $d, "
                  "personId: $p, taskId: $t, projectIds: $projects) { id } }",
                  {"s": MONDAY + day * DAY_MS, "d": hours * HOUR_MS, "p": org.admin.id,
                   "t": task, "projects": [project]})
    variables: dict[str, Any] = {"c": category, "s": MONDAY, "e": MONDAY + 14 * DAY_MS}
    report = (await gql(REPORT, variables))["getPlannedVsRealReport"]
    assert report["periods"] == [float(MONDAY), float(MONDAY + 7 * DAY_MS)]
    assert report["planned"] == [10.0, 10.0] and report["real"] == [3.0, 4.0]
    assert report["budgetSteps"] == [{"ts": float(MONDAY), "quantity": 25.0}]
    narrowed = (await gql(REPORT, {**variables, "split": "day",
                                   "f": [{"personId": org.admin.id,
                                          "projectIds": [project]}]}))["getPlannedVsRealReport"]
    assert len(narrowed["periods"]) == 14 and sum(narrowed["real"]) == 7.0
    for changed, expected in [({"split": "fortnight"}, 'Invalid argument "periodSplit"'),
                              ({"e": MONDAY}, 'Invalid argument "endTime"'),
                              ({"f": [{"status": "a"}]}, 'Invalid argument "filters[0].status"'),
                              ({"c": "e" * 24}, 'Invalid argument "taskCategoryId"')]:
        message = await gql.error(REPORT, {**variables, **changed})
        assert message.startswith(expected), (changed, message)
    employee = await org.add_member("Eve")
    mine = (await employee.gql(REPORT, variables))["getPlannedVsRealReport"]
    assert mine["real"] == [0.0, 0.0] and mine["planned"] == [10.0, 10.0]


def _value(type_name: str) -> Any:
    return {"SvcId": "0" * 24, "Float": 10.0, "Boolean": True, "SvcTimestamp": 1,
            "[SvcId]": []}.get(type_name.rstrip("!"))


async def test_an_employee_is_refused_every_operation(org: Org) -> None:
    await assert_employee_refused(org, OPERATIONS, _value, "__typename")
