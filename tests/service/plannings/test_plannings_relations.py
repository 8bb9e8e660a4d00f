"""Issue #25 part 5 through POST /graphql: the reset<Member><Items>Relations of the access
lists (derived from access.py's one table), a task's potential owners (assignTaskToPerson,
unassignTaskFromPerson, resetTaskPersonsRelations) and getAvailableSubProjects following the
"Show all secondary projects" switch; as an admin and as an employee."""

from __future__ import annotations

from typing import Any

from tests.service.access_support import (
    absence_type,
    expense_type,
    link,
    link_mutation,
    project,
    switch,
    tag,
)
from tests.support import Org

AVAILABLE_SUBS = """query($pr: SvcId!, $p: SvcId!) {
  getAvailableSubProjects(projectId: $pr, personId: $p) { name } }"""


def reset(operation: str, argument: str) -> str:
    return f"mutation($m: SvcId!) {{ {operation}({argument}: $m) {{ id }} }}"


async def linked(org: Org, unassign: str, member_argument: str, member_id: str,
                 item_argument: str, item_id: str) -> bool:
    """Whether the link exists: unassigning it succeeds (and it is put back)."""
    body = await org.admin.gql.body(link_mutation(unassign, member_argument, item_argument),
                                    {"m": member_id, "i": item_id})
    if body.get("errors"):
        assert "is not assigned" in body["errors"][0]["message"]
        return False
    await link(org, unassign.replace("unassign", "assign").replace("From", "To"),
               member_argument, member_id, item_argument, item_id)
    return True


async def test_a_member_of_the_parent_gets_no_subproject_when_they_are_hidden(org: Org) -> None:
    erin = await org.add_member("Erin")
    apollo = await project(org, "Apollo")
    api = await project(org, "API", apollo)
    await project(org, "Docs", apollo)

    async def available() -> list[str]:
        data = await erin.gql(AVAILABLE_SUBS, {"pr": apollo, "p": erin.id})
        return [p["name"] for p in data["getAvailableSubProjects"]]

    assert await available() == ["API", "Docs"]
    await switch(org, "Project", False)
    await link(org, "assignProjectToPerson", "personId", erin.id, "projectId", apollo)
    assert await available() == ["API", "Docs"]
    await switch(org, "SubProject", False)
    assert await available() == []
    await link(org, "assignSubProjectToPerson", "personId", erin.id, "subProjectId", api)
    assert await available() == ["API"]


async def test_resets_remove_one_members_links_of_one_kind(org: Org) -> None:
    erin = await org.add_member("Erin")
    frank = await org.add_member("Frank")
    dev = await tag(org, "dev")
    apollo = await project(org, "Apollo")
    api = await project(org, "API", apollo)
    vacation = await absence_type(org, "Vacation")
    taxi = await expense_type(org, "Taxi")
    items = [("Project", "projectId", apollo), ("SubProject", "subProjectId", api),
             ("AbsenceType", "absenceTypeId", vacation), ("ExpenseType", "expenseTypeId", taxi)]
    members = [("Person", "personId", erin.id), ("Person", "personId", frank.id),
               ("Tag", "tagId", dev)]
    for who, member_argument, member_id in members:
        for what, item_argument, item_id in items:
            await link(org, f"assign{what}To{who}", member_argument, member_id, item_argument,
                       item_id)
    await link(org, "assignExpenseTypeToProject", "projectId", apollo, "expenseTypeId", taxi)

    async def links_of(who: str, member_argument: str, member_id: str) -> list[str]:
        return [what for what, item_argument, item_id in items
                if await linked(org, f"unassign{what}From{who}", member_argument, member_id,
                                item_argument, item_id)]

    # An employee may not reset; nothing changed.
    assert await erin.gql.denied(reset("resetPersonProjectsRelations", "personId"),
                                 {"m": erin.id}) == ["Mutation.resetPersonProjectsRelations"]
    data = await org.admin.gql(reset("resetPersonProjectsRelations", "personId"), {"m": erin.id})
    assert data["resetPersonProjectsRelations"]["id"] == erin.id
    # The project's line is gone, the subproject's (same table) stays; Frank keeps his.
    assert await links_of("Person", "personId", erin.id) == [
        "SubProject", "AbsenceType", "ExpenseType"]
    for what in ("SubProject", "AbsenceType", "ExpenseType"):
        await org.admin.gql(reset(f"resetPerson{what}sRelations", "personId"), {"m": erin.id})
    assert await links_of("Person", "personId", erin.id) == []
    assert len(await links_of("Person", "personId", frank.id)) == 4
    # A retry of a reset changes nothing and does not fail.
    await org.admin.gql(reset("resetPersonProjectsRelations", "personId"), {"m": erin.id})
    for what in ("Project", "SubProject", "AbsenceType", "ExpenseType"):
        await org.admin.gql(reset(f"resetTag{what}sRelations", "tagId"), {"m": dev})
    assert await links_of("Tag", "tagId", dev) == []
    data = await org.admin.gql(reset("resetProjectExpenseTypesRelations", "projectId"),
                               {"m": apollo})
    assert data["resetProjectExpenseTypesRelations"]["id"] == apollo
    assert not await linked(org, "unassignExpenseTypeFromProject", "projectId", apollo,
                            "expenseTypeId", taxi)
    # Written to the audit trail (once per successful reset; the refused one is not there).
    trails = await org.admin.gql(
        'query { getAuditTrails(operations: ["resetPersonProjectsRelations"]) '
        "{ operationName arguments { name value } } }")
    assert len(trails["getAuditTrails"]) == 2
    # Unknown ids are named.
    assert 'Invalid argument "tagId"' in await org.admin.gql.error(
        reset("resetTagProjectsRelations", "tagId"), {"m": "f" * 24})
    assert 'Invalid argument "personId"' in await org.admin.gql.error(
        reset("resetPersonSubProjectsRelations", "personId"), {"m": erin.id[::-1]})


PAIR = """mutation($t: SvcId!, $p: SvcId!) {{ {0}(taskId: $t, personId: $p) {{
  id sourceId sourceKey targetId targetKey }} }}"""


async def test_potential_owners_of_a_task(org: Org) -> None:
    erin = await org.add_member("Erin")
    frank = await org.add_member("Frank")
    task = (await org.admin.gql('mutation { addTask(name: "Design") { id } }'))["addTask"]["id"]
    pair = {"t": task, "p": erin.id}
    assert await erin.gql.denied(PAIR.format("assignTaskToPerson"), pair) == [
        "Mutation.assignTaskToPerson"]
    first = (await org.admin.gql(PAIR.format("assignTaskToPerson"), pair))["assignTaskToPerson"]
    assert (first["sourceId"], first["sourceKey"], first["targetId"], first["targetKey"]) == (
        erin.id, "personsOfTask", task, "persons")
    # The double submit returns the same link.
    again = (await org.admin.gql(PAIR.format("assignTaskToPerson"), pair))["assignTaskToPerson"]
    assert again["id"] == first["id"]
    # Frank owns the task: he is no potential owner to unassign, and the reset keeps him owner.
    await org.admin.gql(PAIR.format("assignOwnerOfTask"), {"t": task, "p": frank.id})
    assert "is not a potential owner" in await org.admin.gql.error(
        PAIR.format("unassignTaskFromPerson"), {"t": task, "p": frank.id})
    assert await erin.gql.denied("mutation($t: SvcId!) { resetTaskPersonsRelations(taskId: $t) "
                                 "{ id } }", {"t": task}) == [
        "Mutation.resetTaskPersonsRelations"]
    data = await org.admin.gql("mutation($t: SvcId!) { resetTaskPersonsRelations(taskId: $t) "
                               "{ id } }", {"t": task})
    assert data["resetTaskPersonsRelations"]["id"] == task
    assert "is not a potential owner" in await org.admin.gql.error(
        PAIR.format("unassignTaskFromPerson"), pair)
    await org.admin.gql(PAIR.format("unassignOwnerOfTask"), {"t": task, "p": frank.id})
    # Assign, unassign, and the task is named when unknown.
    await org.admin.gql(PAIR.format("assignTaskToPerson"), pair)
    gone: dict[str, Any] = (await org.admin.gql(PAIR.format("unassignTaskFromPerson"), pair))
    assert gone["unassignTaskFromPerson"]["sourceId"] == erin.id
    assert 'Invalid argument "taskId"' in await org.admin.gql.error(
        PAIR.format("assignTaskToPerson"), {"t": "f" * 24, "p": erin.id})


DAY = 86_400_000
TASK_END = """mutation($id: SvcId!, $t: SvcTimestamp) {{ {0}(id: $id, {1}: $t) {{
  startTime {{ ts }} endTime {{ ts }} }} }}"""


async def test_each_end_of_a_tasks_period_alone(org: Org) -> None:
    erin = await org.add_member("Erin")
    task = (await org.admin.gql('mutation { addTask(name: "Plan") { id } }'))["addTask"]["id"]
    start, end = 1_767_225_600_000, 1_767_225_600_000 + 10 * DAY
    starting = TASK_END.format("editTaskStartTime", "startTime")
    ending = TASK_END.format("editTaskEndTime", "endTime")
    assert await erin.gql.denied(starting, {"id": task, "t": start}) == [
        "Mutation.editTaskStartTime"]
    data = await org.admin.gql(starting, {"id": task, "t": start})
    assert data["editTaskStartTime"] == {"startTime": {"ts": start}, "endTime": None}
    data = await org.admin.gql(ending, {"id": task, "t": end})
    assert data["editTaskEndTime"] == {"startTime": {"ts": start}, "endTime": {"ts": end}}
    # The period stays ordered, whichever end moves; the error names the argument.
    assert 'Invalid argument "endTime"' in await org.admin.gql.error(
        ending, {"id": task, "t": start - DAY})
    assert 'Invalid argument "startTime"' in await org.admin.gql.error(
        starting, {"id": task, "t": end + DAY})
    data = await org.admin.gql(starting, {"id": task, "t": None})
    assert data["editTaskStartTime"] == {"startTime": None, "endTime": {"ts": end}}
    assert 'Invalid argument "id"' in await org.admin.gql.error(
        ending, {"id": "f" * 24, "t": end})
