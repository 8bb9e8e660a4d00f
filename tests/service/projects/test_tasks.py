"""Tasks, task categories and statuses, owners through POST /graphql."""

from __future__ import annotations

from typing import Any

from plumbing.db import unit_of_work
from service.models import TimeRecord
from service.projects.tasks_access import task_owner_ids
from tests.support import DAY_MS, Org

ADD = """mutation($name: SvcName!, $categoryId: SvcId, $parentId: SvcId, $statusId: SvcId,
               $color: SvcColor) {
  addTask(name: $name, categoryId: $categoryId, parentId: $parentId, statusId: $statusId,
          color: $color) {
    id name level color archived effort startTime { ts } endTime { ts }
    category { id name } status { id name } parent { id } childrenIds dependencies { id }
  }
}"""
GET = """query($id: SvcId!) { getTask(id: $id) {
  id name level archived effort startTime { ts iso } endTime { ts iso }
  category { id } status { id name } parent { id } childrenIds dependencies { id name }
} }"""
LIST = """query($filter: [SvcTaskFilter], $archived: Boolean, $categoryId: SvcId) {
  getTasks(filter: $filter, archived: $archived, categoryId: $categoryId) { id }
  countTasks(filter: $filter, archived: $archived, categoryId: $categoryId)
  filterTaskIds(filter: $filter, archived: $archived, categoryId: $categoryId)
}"""
CATEGORY = """mutation($name: SvcName!) { addTaskCategory(name: $name) {
  id name levelNames taskMove statuses { id name color maxConcurrentTasks taskIds category }
} }"""
MAX = """mutation($s: SvcId!, $max: Int) {
  editTaskCategoryStatusMaxConcurrentTasks(statusId: $s, maxConcurrentTasks: $max) {
    id maxConcurrentTasks } }"""
MOVE = """mutation($ids: [SvcId]!, $s: SvcId!, $order: [SvcId]!) {
  moveTasksToStatus(taskIds: $ids, targetStatusId: $s, orderedTaskIds: $order) {
    id name taskIds } }"""
STATUS = "mutation($id: SvcId!, $s: SvcId!) { editTaskStatus(id: $id, statusId: $s) { id status { id } } }"  # noqa: E501


async def add(org: Org, name: str, **variables: Any) -> dict[str, Any]:
    return (await org.admin.gql(ADD, {"name": name, **variables}))["addTask"]  # type: ignore[no-any-return]


async def ids(org: Org, **variables: Any) -> list[str]:
    data = await org.admin.gql(LIST, variables)
    assert data["countTasks"] == len(data["getTasks"])
    assert data["filterTaskIds"] == [t["id"] for t in data["getTasks"]]
    return list(data["filterTaskIds"])


async def test_tasks_categories_statuses_and_tree(org: Org) -> None:
    gql = org.admin.gql
    first = await add(org, "Design")
    assert first["category"]["name"] == "Tasks"
    assert first["status"]["name"] == "To do"
    assert first["level"] == 0 and first["childrenIds"] == [] and first["dependencies"] == []
    sub = await add(org, "Sketches", parentId=first["id"])
    assert sub["level"] == 1 and sub["parent"]["id"] == first["id"]
    assert sub["category"]["id"] == first["category"]["id"]

    board = (await gql(CATEGORY, {"name": "Board"}))["addTaskCategory"]
    assert [s["name"] for s in board["statuses"]] == ["To do", "In progress", "Done"]
    assert all(s["category"] == board["id"] for s in board["statuses"])
    doing = board["statuses"][1]
    task = await add(org, "Build", statusId=doing["id"])
    assert task["category"]["id"] == board["id"] and task["status"]["id"] == doing["id"]
    message = await gql.error(ADD, {"name": "X", "categoryId": first["category"]["id"],
                                    "statusId": doing["id"]})
    assert message.startswith('Invalid argument "statusId"')
    message = await gql.error(ADD, {"name": "X", "parentId": "0" * 24})
    assert message.startswith('Invalid argument "parentId"')

    got = (await gql(GET, {"id": first["id"]}))["getTask"]
    assert got["childrenIds"] == [sub["id"]]

    # Statuses: add, rename, color, order, delete.
    data = await gql(
        'mutation($c: SvcId!) { addTaskCategoryStatus(categoryId: $c, name: "Review") {'
        " id name category } }",
        {"c": board["id"]},
    )
    review = data["addTaskCategoryStatus"]
    assert review["category"] == board["id"]
    data = await gql(
        "mutation($s: SvcId!) {"
        '  editTaskCategoryStatusName(statusId: $s, name: "QA") { name }'
        '  editTaskCategoryStatusColor(statusId: $s, color: "#00ff00") { color } }',
        {"s": review["id"]},
    )
    assert data["editTaskCategoryStatusName"]["name"] == "QA"
    assert data["editTaskCategoryStatusColor"]["color"] == 0x00FF00
    message = await gql.error(
        'mutation($s: SvcId!) { editTaskCategoryStatusColor(statusId: $s, color: "green") { id } }',
        {"s": review["id"]},
    )
    assert message.startswith('Invalid argument "color"')
    order = [review["id"]] + [s["id"] for s in board["statuses"]]
    data = await gql(
        "mutation($c: SvcId!, $o: [SvcId]!) { editTaskCategoryStatusOrder(id: $c, statusIds: $o)"
        " { statuses { id } } }",
        {"c": board["id"], "o": order},
    )
    assert [s["id"] for s in data["editTaskCategoryStatusOrder"]["statuses"]] == order
    message = await gql.error(
        "mutation($c: SvcId!, $o: [SvcId]!) { editTaskCategoryStatusOrder(id: $c, statusIds: $o)"
        " { id } }",
        {"c": board["id"], "o": order[:2]},
    )
    assert message.startswith('Invalid argument "statusIds"')
    delete_status = "mutation($c: SvcId!, $s: SvcId!) { deleteTaskCategoryStatus(categoryId: $c, statusId: $s) { id name } }"  # noqa: E501
    message = await gql.error(delete_status, {"c": board["id"], "s": doing["id"]})
    assert "In progress" in message and "1 task" in message
    message = await gql.error(delete_status, {"c": first["category"]["id"], "s": review["id"]})
    assert message.startswith('Invalid argument "statusId"')
    data = await gql(delete_status, {"c": board["id"], "s": review["id"]})
    assert data["deleteTaskCategoryStatus"]["name"] == "QA"

    # Categories: rename, task move, delete only when unused.
    data = await gql(
        "mutation($c: SvcId!) {"
        '  editTaskCategoryName(id: $c, name: "Kanban") { name }'
        "  editCategoryTaskMove(categoryId: $c, taskMove: 2) { id category } }",
        {"c": board["id"]},
    )
    assert data["editTaskCategoryName"]["name"] == "Kanban"
    assert data["editCategoryTaskMove"]["category"] == board["id"]
    categories = (await gql("{ getTaskCategories { id name taskMove statuses { name } } }"))[
        "getTaskCategories"
    ]
    assert [(c["name"], c["taskMove"]) for c in categories] == [("Kanban", 2), ("Tasks", None)]
    message = await gql.error(
        "mutation($c: SvcId!) { deleteTaskCategory(id: $c) { id } }", {"c": board["id"]}
    )
    assert "Kanban" in message
    empty = (await gql(CATEGORY, {"name": "Empty"}))["addTaskCategory"]
    data = await gql(
        "mutation($c: SvcId!) { deleteTaskCategory(id: $c) { name } }", {"c": empty["id"]}
    )
    assert data["deleteTaskCategory"]["name"] == "Empty"


async def test_status_moves_and_max_concurrent_tasks(org: Org) -> None:
    gql = org.admin.gql
    other = await add(org, "Other")
    board = (await gql(CATEGORY, {"name": "Board"}))["addTaskCategory"]
    todo, doing, done = (s["id"] for s in board["statuses"])
    a = await add(org, "A", categoryId=board["id"])
    b = await add(org, "B", categoryId=board["id"])
    c = await add(org, "C", categoryId=board["id"])

    data = await gql(MAX, {"s": doing, "max": 2})
    assert data["editTaskCategoryStatusMaxConcurrentTasks"]["maxConcurrentTasks"] == 2
    data = await gql(STATUS, {"id": a["id"], "s": doing})
    assert data["editTaskStatus"]["status"]["id"] == doing
    message = await gql.error(STATUS, {"id": other["id"], "s": doing})
    assert message.startswith('Invalid argument "statusId"')

    # Moving two more into a status that allows two and holds one is refused, whole.
    message = await gql.error(MOVE, {"ids": [b["id"], c["id"]], "s": doing, "order": []})
    assert 'Status "In progress" allows at most 2' in message
    status = await gql("{ getTaskCategories { statuses { id taskIds } } }")
    columns = {
        s["id"]: s["taskIds"] for cat in status["getTaskCategories"] for s in cat["statuses"]
    }
    assert columns[doing] == [a["id"]] and columns[todo] == [b["id"], c["id"]]

    data = await gql(MOVE, {"ids": [b["id"]], "s": doing, "order": [b["id"], a["id"]]})
    assert data["moveTasksToStatus"]["taskIds"] == [b["id"], a["id"]]
    message = await gql.error(STATUS, {"id": c["id"], "s": doing})
    assert '"In progress" allows at most 2' in message
    message = await gql.error(ADD, {"name": "D", "statusId": doing})
    assert '"In progress" allows at most 2' in message
    message = await gql.error(MAX, {"s": doing, "max": 1})
    assert message.startswith('Invalid argument "maxConcurrentTasks"')
    message = await gql.error(MAX, {"s": doing, "max": 0})
    assert message.startswith('Invalid argument "maxConcurrentTasks"')

    # Archived tasks do not count; unarchiving into a full status is refused.
    await gql("mutation($id: SvcId!) { archiveTask(id: $id) { id } }", {"id": a["id"]})
    await gql(STATUS, {"id": c["id"], "s": doing})
    message = await gql.error(
        "mutation($id: SvcId!) { unarchiveTask(id: $id) { id } }", {"id": a["id"]}
    )
    assert '"In progress" allows at most 2' in message
    data = await gql(MAX, {"s": doing, "max": None})
    assert data["editTaskCategoryStatusMaxConcurrentTasks"]["maxConcurrentTasks"] is None
    await gql("mutation($id: SvcId!) { unarchiveTask(id: $id) { id } }", {"id": a["id"]})

    # Ordering: named tasks first, then the rest; bad ids are named.
    data = await gql(MOVE, {"ids": [], "s": doing, "order": [c["id"]]})
    assert data["moveTasksToStatus"]["taskIds"][0] == c["id"]
    message = await gql.error(MOVE, {"ids": [], "s": done, "order": [a["id"]]})
    assert message.startswith('Invalid argument "orderedTaskIds[0]"')
    message = await gql.error(MOVE, {"ids": [other["id"]], "s": done, "order": []})
    assert message.startswith('Invalid argument "taskIds[0]"')
    message = await gql.error(MOVE, {"ids": ["1" * 24], "s": done, "order": []})
    assert message.startswith('Invalid argument "taskIds[0]"')
    message = await gql.error(MOVE, {"ids": [], "s": "1" * 24, "order": []})
    assert message.startswith('Invalid argument "targetStatusId"')


async def test_period_effort_parent_dependencies_and_filters(org: Org) -> None:
    gql = org.admin.gql
    start = 1_767_225_600_000  # 2026-01-01
    a = await add(org, "Alpha")
    b = await add(org, "Beta")
    c = await add(org, "Gamma", parentId=b["id"])
    period = "mutation($id: SvcId!, $s: SvcTimestamp, $e: SvcTimestamp, $effort: Float) { editTaskPeriod(id: $id, startTime: $s, endTime: $e, effort: $effort) { startTime { ts iso } endTime { ts } effort } }"  # noqa: E501
    data = await gql(period, {"id": a["id"], "s": start, "e": start + 10 * DAY_MS, "effort": 90})
    assert data["editTaskPeriod"] == {
        "startTime": {"ts": start, "iso": "2026-01-01T00:00:00.000Z"},
        "endTime": {"ts": start + 10 * DAY_MS},
        "effort": 90.0,
    }
    message = await gql.error(period, {"id": a["id"], "s": start, "e": start - 1})
    assert message.startswith('Invalid argument "endTime"')
    message = await gql.error(period, {"id": a["id"], "effort": -5})
    assert message.startswith('Invalid argument "effort"')
    data = await gql(
        "mutation($id: SvcId!) { editTaskDuration(id: $id, effort: 120) {"
        " effort startTime { ts } } }",
        {"id": a["id"]},
    )
    assert data["editTaskDuration"] == {"effort": 120.0, "startTime": {"ts": start}}
    await gql(period, {"id": b["id"], "s": start + 20 * DAY_MS, "e": start + 30 * DAY_MS})

    window = "query($s: SvcTimestamp, $e: SvcTimestamp) { getTasks(startTime: $s, endTime: $e) { id } countTasks(startTime: $s, endTime: $e) }"  # noqa: E501
    data = await gql(window, {"s": start + 2 * DAY_MS, "e": start + 5 * DAY_MS})
    assert {t["id"] for t in data["getTasks"]} == {a["id"], c["id"]}, "undated tasks overlap"
    assert data["countTasks"] == 2

    # Parent, levels, cycles.
    parent = "mutation($id: SvcId!, $p: SvcId) { editTaskParent(id: $id, parentId: $p) { level parent { id } } }"  # noqa: E501
    data = await gql(parent, {"id": b["id"], "p": a["id"]})
    assert data["editTaskParent"] == {"level": 1, "parent": {"id": a["id"]}}
    assert (await gql(GET, {"id": c["id"]}))["getTask"]["level"] == 2
    message = await gql.error(parent, {"id": a["id"], "p": c["id"]})
    assert message.startswith('Invalid argument "parentId"')

    # Dependencies, without cycles.
    deps = "mutation($id: SvcId!, $d: [SvcId]!) { editTaskDependencies(id: $id, dependencyIds: $d) { dependencies { id } } }"  # noqa: E501
    data = await gql(deps, {"id": a["id"], "d": [b["id"], c["id"]]})
    assert {d["id"] for d in data["editTaskDependencies"]["dependencies"]} == {b["id"], c["id"]}
    message = await gql.error(deps, {"id": c["id"], "d": [a["id"]]})
    assert message.startswith('Invalid argument "dependencyIds[0]"') and "cycle" in message
    message = await gql.error(deps, {"id": c["id"], "d": [c["id"]]})
    assert message.startswith('Invalid argument "dependencyIds[0]"')

    # Name, color and filters.
    data = await gql(
        'mutation($id: SvcId!) { editTaskName(id: $id, name: "alpha one") { name }'
        ' editTaskColor(id: $id, color: "red") { color } }',
        {"id": a["id"]},
    )
    assert data["editTaskName"]["name"] == "alpha one" and data["editTaskColor"]["color"] == "red"
    assert await ids(org, filter=[{"name": "ALPHA"}]) == [a["id"]]
    assert await ids(org, filter=[{"childrenOfId": a["id"]}]) == [b["id"]]
    assert await ids(org, filter=[{"level": 2}]) == [c["id"]]
    assert await ids(org, filter=[{"id": a["id"], "following": "OR"}, {"id": c["id"]}]) == [
        a["id"], c["id"]
    ]
    status_id = a["status"]["id"]
    assert len(await ids(org, filter=[{"statusId": status_id}])) == 3
    assert await ids(org, filter=[{"notStatusId": status_id}]) == []
    category_id = a["category"]["id"]
    assert len(await ids(org, categoryId=category_id)) == 3
    assert len(await ids(org, filter=[{"taskCategoryIds": [category_id]}])) == 3
    assert await ids(org, filter=[{"notTaskCategoryIds": [category_id]}]) == []

    # Planning on a project.
    project = (await gql('mutation { addProject(name: "P") { id category { id } } }'))[
        "addProject"
    ]
    relation = await gql(
        "mutation($t: SvcId!, $p: SvcId!) { assignTaskToProject(taskId: $t, projectId: $p) {"
        " sourceId targetId } }",
        {"t": c["id"], "p": project["id"]},
    )
    assert relation["assignTaskToProject"]["targetId"] == project["id"]
    assert await ids(org, filter=[{"projectId": project["id"]}]) == [c["id"]]
    assert c["id"] not in await ids(org, filter=[{"notProjectId": project["id"]}])
    assert await ids(org, filter=[{"projectCategoryIds": [project["category"]["id"]]}]) == [
        c["id"]
    ]
    message = await gql.error(
        "mutation($t: SvcId!, $p: SvcId!) { unassignTaskFromProject(taskId: $t, projectId: $p)"
        " { id } }",
        {"t": a["id"], "p": project["id"]},
    )
    assert message.startswith('Invalid argument "projectId"')
    await gql(
        "mutation($t: SvcId!, $p: SvcId!) { unassignTaskFromProject(taskId: $t, projectId: $p)"
        " { id } }",
        {"t": c["id"], "p": project["id"]},
    )
    assert await ids(org, filter=[{"projectId": project["id"]}]) == []

    message = await gql.error(LIST, {"filter": [{}]})
    assert message.startswith('Invalid argument "filter[0]"')


async def test_archive_delete_and_owners(org: Org) -> None:
    gql = org.admin.gql
    parent = await add(org, "Parent")
    child = await add(org, "Child", parentId=parent["id"])
    logged = await add(org, "Logged")
    free = await add(org, "Free")

    data = await gql(
        "mutation($id: SvcId!) { archiveTask(id: $id) { id archived } }", {"id": parent["id"]}
    )
    assert {t["id"] for t in data["archiveTask"]} == {parent["id"], child["id"]}
    assert set(await ids(org)) == {logged["id"], free["id"]}
    assert len(await ids(org, archived=True)) == 4
    data = await gql(
        "mutation($ids: [SvcId!]!) { unarchiveTasks(ids: $ids) { id archived } }",
        {"ids": [parent["id"], child["id"]]},
    )
    assert all(not t["archived"] for t in data["unarchiveTasks"])
    data = await gql(
        "mutation($ids: [SvcId!]!) { archiveTasks(ids: $ids) { id } }", {"ids": [free["id"]]}
    )
    assert [t["id"] for t in data["archiveTasks"]] == [free["id"]]
    await gql("mutation($id: SvcId!) { unarchiveTask(id: $id) { id } }", {"id": free["id"]})

    now = org.live.clock.now_ms()
    async with unit_of_work(org.live.service.sessions) as session:
        session.add(TimeRecord(
            organisation_id=org.id, person_id=org.admin.id, start_ms=now, duration_ms=60_000,
            task_id=logged["id"], comment="", created_ms=now, modified_ms=now,
        ))
    delete = "mutation($id: SvcId!, $check: Boolean) { deleteTask(id: $id, check: $check) { id name } }"  # noqa: E501
    assert "1 subtask" in await gql.error(delete, {"id": parent["id"], "check": True})
    assert "1 time record" in await gql.error(delete, {"id": logged["id"]})
    data = await gql(delete, {"id": free["id"], "check": True})
    assert data["deleteTask"]["name"] == "Free" and free["id"] in await ids(org)
    await gql(delete, {"id": free["id"]})
    assert free["id"] not in await ids(org)

    # Owners: one per task.
    mia = await org.add_member("Mia", role="manager")
    eve = await org.add_member("Eve")
    assign = "mutation($t: SvcId!, $p: SvcId!) { assignOwnerOfTask(taskId: $t, personId: $p) { id sourceId targetId } }"  # noqa: E501
    unassign = "mutation($t: SvcId!, $p: SvcId!) { unassignOwnerOfTask(taskId: $t, personId: $p) { id } }"  # noqa: E501
    relation = (await gql(assign, {"t": child["id"], "p": mia.id}))["assignOwnerOfTask"]
    assert relation["sourceId"] == mia.id and relation["targetId"] == child["id"]
    assert await ids(org, filter=[{"ownerId": mia.id}]) == [child["id"]]
    await gql(assign, {"t": child["id"], "p": eve.id})
    assert await ids(org, filter=[{"ownerId": mia.id}]) == []
    assert child["id"] not in await ids(org, filter=[{"notOwnerId": eve.id}])
    async with unit_of_work(org.live.service.sessions) as session:
        assert await task_owner_ids(session, org.id, child["id"]) == {eve.id}
    message = await gql.error(unassign, {"t": child["id"], "p": mia.id})
    assert message.startswith('Invalid argument "personId"')
    message = await gql.error(assign, {"t": "2" * 24, "p": mia.id})
    assert message.startswith('Invalid argument "taskId"')
    await gql(unassign, {"t": child["id"], "p": eve.id})
    await gql(assign, {"t": child["id"], "p": mia.id})
    data = await gql(
        "mutation($t: SvcId!) { resetTaskOwner(taskId: $t) { id } }", {"t": child["id"]}
    )
    assert data["resetTaskOwner"]["id"] == child["id"]
    assert await ids(org, filter=[{"ownerId": mia.id}]) == []


async def test_employees_read_but_do_not_edit(org: Org) -> None:
    task = await add(org, "Visible")
    eve = await org.add_member("Eve")
    data = await eve.gql(LIST, {})
    assert [t["id"] for t in data["getTasks"]] == [task["id"]]
    assert (await eve.gql(GET, {"id": task["id"]}))["getTask"]["status"]["name"] == "To do"
    assert (await eve.gql("{ getTaskCategories { id } }"))["getTaskCategories"]
    status_id = task["status"]["id"]
    for mutation, variables in [
        (ADD, {"name": "Nope"}),
        ('mutation($id: SvcId!) { editTaskName(id: $id, name: "N") { id } }', {"id": task["id"]}),
        ("mutation($id: SvcId!) { deleteTask(id: $id) { id } }", {"id": task["id"]}),
        ("mutation($id: SvcId!) { archiveTask(id: $id) { id } }", {"id": task["id"]}),
        (STATUS, {"id": task["id"], "s": status_id}),
        (MOVE, {"ids": [task["id"]], "s": status_id, "order": []}),
        (MAX, {"s": status_id, "max": 3}),
        (CATEGORY, {"name": "N"}),
        ("mutation($t: SvcId!, $p: SvcId!) { assignOwnerOfTask(taskId: $t, personId: $p) { id } }",
         {"t": task["id"], "p": eve.id}),
    ]:
        denied = await eve.gql.denied(mutation, variables)
        assert len(denied) == 1 and denied[0].startswith("Mutation."), denied
    assert await ids(org, filter=[{"ownerId": eve.id}]) == []
