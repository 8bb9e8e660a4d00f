"""Relations, managers, editable attributes, pasteAttributes, duplicateTag and tookOverBy
through POST /graphql (issue #25): every operation as an administrator and as an employee
(refused, nothing changed), its result read back through the reference schema's attributes,
repeated calls, and unknown ids named. One organisation per backend for the whole module;
each case makes its own items."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.service.access_support import project, tag
from tests.service.test_approvals_support import (
    STATE,
    WEEK,
    WEEK_END,
    add_record,
    add_task,
    approve,
    set_stages,
    submit,
)
from tests.support import LiveServer, Member, Org, new_org
from tests.timebot.signin_support import browser, csrf_of, gql, sign_in


@dataclass
class World:
    org: Org
    employee: Member

    @property
    def admin(self) -> Any:
        return self.org.admin.gql


@pytest.fixture(scope="module")
async def world(live: LiveServer, http: httpx.AsyncClient) -> AsyncIterator[World]:
    org = await new_org(live, http)
    yield World(org, await org.add_member("Erin"))


def _name(prefix: str) -> str:
    return f"{prefix} {uuid.uuid4().hex[:6]}"


async def new_person(w: World) -> str:
    return (await w.org.add_member(_name("P"))).id


async def new_tag(w: World) -> str:
    return await tag(w.org, _name("T"))


async def new_project(w: World) -> str:
    return await project(w.org, _name("Pr"))


async def new_subproject(w: World) -> str:
    return await project(w.org, _name("Sub"), await new_project(w))


async def new_task(w: World) -> str:
    data = await w.admin("mutation($n: SvcName!) { addTask(name: $n) { id } }",
                         {"n": _name("Task")})
    return str(data["addTask"]["id"])


async def new_schedule(w: World) -> str:
    data = await w.admin("mutation($n: SvcName!) { addScheduleType(name: $n, "
                         "calendarStartTime: 1767225600000) { id } }", {"n": _name("S")})
    return str(data["addScheduleType"]["id"])


Factory = Callable[[World], Awaitable[str]]
GETTERS = {"personId": "getPerson", "tagId": "getTag", "projectId": "getProject",
           "subProjectId": "getProject", "taskId": "getTask", "scheduleTypeId": "getScheduleType"}


async def read(w: World, argument: str, item_id: str, selection: str) -> Any:
    getter = GETTERS[argument]
    data = await w.admin(f"query($id: SvcId!) {{ {getter}(id: $id) {{ {selection} }} }}",
                         {"id": item_id})
    return data[getter]


def values(relations: list[dict[str, Any]]) -> list[str]:
    return [r["value"]["id"] for r in relations]


# assign, unassign, reset, (member argument, factory, its read), (item argument, factory, its
# read), source and target keys of the relation.
LINKS = [
    ("ScheduleTypeToPerson", "resetPersonScheduleTypesRelations",
     ("personId", new_person, "scheduleTypes"), ("scheduleTypeId", new_schedule,
                                                 "scheduleTypesOfPerson"),
     "scheduleTypes", "scheduleTypesOfPerson"),
    ("ScheduleTypeToTag", "resetTagScheduleTypesRelations",
     ("tagId", new_tag, "scheduleTypes"), ("scheduleTypeId", new_schedule, "scheduleTypesOfTag"),
     "scheduleTypes", "scheduleTypesOfTag"),
    ("SubProjectToProject", "resetProjectSubProjectsRelations",
     ("projectId", new_project, "subProjects"), ("subProjectId", new_subproject,
                                                 "subProjectsOfProject"),
     "subProjects", "subProjectsOfProject"),
    ("TaskToTag", "resetTaskTagsRelations",
     ("taskId", new_task, "tags"), ("tagId", new_tag, "tagsOfTask"), "tags", "tagsOfTask"),
]


def _pair(operation: str, member: str, item: str) -> str:
    return (f"mutation($m: SvcId!, $i: SvcId!) {{ {operation}({member}: $m, {item}: $i) "
            "{ id sourceId sourceKey targetId targetKey } }")


@pytest.mark.parametrize("case", LINKS, ids=[c[0] for c in LINKS])
async def test_link_assign_read_unassign_reset(world: World, case: Any) -> None:
    what, reset, member_side, item_side, source_key, target_key = case
    member_argument, member_factory, member_read = member_side
    item_argument, item_factory, item_read = item_side
    assign = f"assign{what}"
    unassign = "unassign" + what.replace("To", "From", 1)
    member, item, other = (await member_factory(world), await item_factory(world),
                           await item_factory(world))
    pair = {"m": member, "i": item}
    assert await world.employee.gql.denied(_pair(assign, member_argument, item_argument),
                                           pair) == [f"Mutation.{assign}"]
    first = (await world.admin(_pair(assign, member_argument, item_argument), pair))[assign]
    assert (first["sourceId"], first["sourceKey"], first["targetId"], first["targetKey"]) == (
        member, source_key, item, target_key)
    again = (await world.admin(_pair(assign, member_argument, item_argument), pair))[assign]
    assert again["id"] == first["id"]  # a retry returns the same link
    await world.admin(_pair(assign, member_argument, item_argument), {"m": member, "i": other})
    mine = await read(world, member_argument, member,
                      f"relations {{ {member_read} {{ relationId value {{ id }} }} }}")
    assert sorted(values(mine["relations"][member_read])) == sorted([item, other])
    theirs = await read(world, item_argument, item,
                        f"relations {{ {item_read} {{ relationId value {{ id }} }} }}")
    assert values(theirs["relations"][item_read]) == [member]
    gone = (await world.admin(_pair(unassign, member_argument, item_argument), pair))[unassign]
    assert gone["id"] == first["id"]
    assert "is not assigned" in await world.admin.error(
        _pair(unassign, member_argument, item_argument), pair)
    reset_query = f"mutation($m: SvcId!) {{ {reset}({member_argument}: $m) {{ id }} }}"
    assert await world.employee.gql.denied(reset_query, {"m": member}) == [f"Mutation.{reset}"]
    assert (await world.admin(reset_query, {"m": member}))[reset]["id"] == member
    mine = await read(world, member_argument, member, f"relations {{ {member_read} {{ "
                      "relationId } }")
    assert mine["relations"][member_read] == []
    # Unknown ids are named, never a server error.
    assert f'Invalid argument "{item_argument}"' in await world.admin.error(
        _pair(assign, member_argument, item_argument), {"m": member, "i": "f" * 24})
    assert f'Invalid argument "{member_argument}"' in await world.admin.error(
        reset_query, {"m": "f" * 24})


async def test_a_subproject_offered_under_a_project_is_available_there(world: World) -> None:
    apollo, gemini = await new_project(world), await new_project(world)
    api = await project(world.org, "API", gemini)
    available = """query($pr: SvcId!, $p: SvcId!) {
      getAvailableSubProjects(projectId: $pr, personId: $p) { id } }"""
    who = {"pr": apollo, "p": world.employee.id}
    assert (await world.admin(available, who))["getAvailableSubProjects"] == []
    await world.admin(_pair("assignSubProjectToProject", "projectId", "subProjectId"),
                      {"m": apollo, "i": api})
    assert (await world.admin(available, who))["getAvailableSubProjects"] == [{"id": api}]
    # A top-level project is no subproject; a project is not offered under itself.
    assert "is not a subproject" in await world.admin.error(
        _pair("assignSubProjectToProject", "projectId", "subProjectId"),
        {"m": apollo, "i": gemini})
    assert "cannot be linked to itself" in await world.admin.error(
        _pair("assignSubProjectToProject", "projectId", "subProjectId"), {"m": api, "i": api})


TAGGINGS = [("Person", "personId", new_person, "persons", "getPerson"),
            ("Project", "projectId", new_project, "projects", "getProject"),
            ("Task", "taskId", new_task, "tasks", "getTask")]
START = 1_767_225_600_000


@pytest.mark.parametrize("case", TAGGINGS, ids=[c[0] for c in TAGGINGS])
async def test_tagging_and_its_start_time(world: World, case: Any) -> None:
    kind, argument, factory, key, getter = case
    tag_id, item = await new_tag(world), await factory(world)
    tag_it = (f"mutation($t: SvcId!, $i: SvcId!, $s: SvcTimestamp) {{ tag{kind}(tagId: $t, "
              f"{argument}: $i, startTime: $s) {{ id sourceId sourceKey targetId targetKey "
              "startTime { ts } } }")
    pair = {"t": tag_id, "i": item, "s": START}
    assert await world.employee.gql.denied(tag_it, pair) == [f"Mutation.tag{kind}"]
    made = (await world.admin(tag_it, pair))[f"tag{kind}"]
    assert (made["sourceId"], made["sourceKey"], made["targetId"], made["targetKey"],
            made["startTime"]) == (tag_id, "tagged", item, "taggedBy", {"ts": START})
    tagged = await read(world, "tagId", tag_id, f"relations {{ tagged {{ {key} {{ "
                        "value { id } startTime { ts } } } }")
    assert tagged["relations"]["tagged"][key] == [{"value": {"id": item},
                                                   "startTime": {"ts": START}}]
    by = await world.admin(f"query($id: SvcId!) {{ {getter}(id: $id) {{ relations {{ "
                           "taggedBy { relationId value { id } } } } }", {"id": item})
    assert by[getter]["relations"]["taggedBy"] == [{"relationId": made["id"],
                                                     "value": {"id": tag_id}}]
    move = ("mutation($r: SvcId!, $s: SvcTimestamp) { editTagStartTime(relationId: $r, "
            "startTime: $s) { id startTime { ts } } }")
    assert await world.employee.gql.denied(move, {"r": made["id"], "s": None}) == [
        "Mutation.editTagStartTime"]
    moved = (await world.admin(move, {"r": made["id"], "s": START + 1000}))["editTagStartTime"]
    assert moved == {"id": made["id"], "startTime": {"ts": START + 1000}}
    assert 'Invalid argument "relationId"' in await world.admin.error(
        move, {"r": "f" * 24, "s": None})
    untag = (f"mutation($t: SvcId!, $i: SvcId!) {{ untag{kind}(tagId: $t, {argument}: $i) "
             "{ id } }")
    assert (await world.admin(untag, pair))[f"untag{kind}"]["id"] == made["id"]
    assert "does not carry tag" in await world.admin.error(untag, pair)
    await world.admin(tag_it, pair)
    reset = f"mutation($t: SvcId!) {{ resetTagged{kind}s(tagId: $t) {{ id }} }}"
    assert await world.employee.gql.denied(reset, {"t": tag_id}) == [
        f"Mutation.resetTagged{kind}s"]
    await world.admin(reset, {"t": tag_id})
    tagged = await read(world, "tagId", tag_id,
                        f"relations {{ tagged {{ {key} {{ relationId }} }} }}")
    assert tagged["relations"]["tagged"][key] == []
    assert f'Invalid argument "{argument}"' in await world.admin.error(
        tag_it, {"t": tag_id, "i": "f" * 24, "s": None})


MANAGED = [("Tag", "tagId", new_tag, "tags", "getTag"),
           ("Task", "taskId", new_task, "tasks", "getTask")]


@pytest.mark.parametrize("case", MANAGED, ids=[c[0] for c in MANAGED])
async def test_managers_of_tags_and_tasks(world: World, case: Any) -> None:
    kind, argument, factory, key, getter = case
    manager, item, other = await new_person(world), await factory(world), await factory(world)
    make, remove = f"makeManagerOf{kind}", f"removeManagerOf{kind}"
    pair = {"m": manager, "i": item}
    assert await world.employee.gql.denied(_pair(make, "managerId", argument), pair) == [
        f"Mutation.{make}"]
    made = (await world.admin(_pair(make, "managerId", argument), pair))[make]
    assert (made["sourceId"], made["sourceKey"], made["targetId"], made["targetKey"]) == (
        manager, "managerOf", item, "managedBy")
    assert (await world.admin(_pair(make, "managerId", argument), pair))[make]["id"] == made["id"]
    await world.admin(_pair(make, "managerId", argument), {"m": manager, "i": other})
    by = await world.admin(f"query($id: SvcId!) {{ {getter}(id: $id) {{ relations {{ "
                           "managedBy { relationId value { id } } } } }", {"id": item})
    assert by[getter]["relations"]["managedBy"] == [{"relationId": made["id"],
                                                      "value": {"id": manager}}]
    of = f"relations {{ managerOf {{ {key} {{ value {{ id }} }} }} }}"
    mine = await read(world, "personId", manager, of)
    assert sorted(values(mine["relations"]["managerOf"][key])) == sorted([item, other])
    assert (await world.admin(_pair(remove, "managerId", argument), pair))[remove]["id"] == \
        made["id"]
    assert "is not a manager of" in await world.admin.error(
        _pair(remove, "managerId", argument), pair)
    reset = f"mutation($m: SvcId!) {{ resetManaged{kind}s(managerId: $m) {{ id }} }}"
    assert await world.employee.gql.denied(reset, {"m": manager}) == [
        f"Mutation.resetManaged{kind}s"]
    await world.admin(reset, {"m": manager})
    assert (await read(world, "personId", manager, of))["relations"]["managerOf"][key] == []
    assert 'Invalid argument "managerId"' in await world.admin.error(
        _pair(make, "managerId", argument), {"m": "f" * 24, "i": item})
    assert f'Invalid argument "{argument}"' in await world.admin.error(
        _pair(make, "managerId", argument), {"m": manager, "i": "f" * 24})


async def test_reset_managed_persons_and_projects_read(world: World) -> None:
    manager, person, apollo = await new_person(world), await new_person(world), \
        await new_project(world)
    await world.admin(_pair("makeManagerOfPerson", "managerId", "personId"),
                      {"m": manager, "i": person})
    await world.admin(_pair("makeManagerOfProject", "managerId", "projectId"),
                      {"m": manager, "i": apollo})
    of = "relations { managerOf { persons { value { id } } projects { value { id } } } }"
    mine = (await read(world, "personId", manager, of))["relations"]["managerOf"]
    assert (values(mine["persons"]), values(mine["projects"])) == ([person], [apollo])
    managed_by = await read(world, "projectId", apollo,
                            "relations { managedBy { value { id } } }")
    assert values(managed_by["relations"]["managedBy"]) == [manager]
    reset = "mutation($m: SvcId!) { resetManagedPersons(managerId: $m) { id } }"
    assert await world.employee.gql.denied(reset, {"m": manager}) == [
        "Mutation.resetManagedPersons"]
    await world.admin(reset, {"m": manager})
    mine = (await read(world, "personId", manager, of))["relations"]["managerOf"]
    assert (mine["persons"], values(mine["projects"])) == ([], [apollo])


DESCRIBED = [("Person", "personId", new_person), ("Project", "projectId", new_project),
             ("Tag", "tagId", new_tag), ("Task", "taskId", new_task)]


@pytest.mark.parametrize("case", DESCRIBED, ids=[c[0] for c in DESCRIBED])
async def test_description(world: World, case: Any) -> None:
    kind, argument, factory = case
    item = await factory(world)
    edit = (f"mutation($id: SvcId!, $d: String) {{ edit{kind}Description(id: $id, "
            "description: $d) { id description } }")
    assert await world.employee.gql.denied(edit, {"id": item, "d": "x"}) == [
        f"Mutation.edit{kind}Description"]
    done = (await world.admin(edit, {"id": item, "d": "Line one\nLine two"}))
    assert done[f"edit{kind}Description"]["description"] == "Line one\nLine two"
    assert (await read(world, argument, item, "description"))["description"] == \
        "Line one\nLine two"
    await world.admin(edit, {"id": item, "d": None})
    assert (await read(world, argument, item, "description"))["description"] is None
    assert 'Invalid argument "description"' in await world.admin.error(
        edit, {"id": item, "d": "x" * 10_001})
    assert 'Invalid argument "id"' in await world.admin.error(edit, {"id": "f" * 24, "d": "x"})


@pytest.mark.parametrize("case", DESCRIBED[:3], ids=[c[0] for c in DESCRIBED[:3]])
async def test_validity_period(world: World, case: Any) -> None:
    kind, argument, factory = case
    item = await factory(world)
    edit = (f"mutation($id: SvcId!, $s: SvcTimestamp, $e: SvcTimestamp) {{ edit{kind}"
            "ValidityPeriod(id: $id, startTime: $s, endTime: $e) { id validityPeriod { "
            "value { startTime { ts } endTime { ts } } } } }")
    period = {"id": item, "s": START, "e": START + 86_400_000}
    assert await world.employee.gql.denied(edit, period) == [
        f"Mutation.edit{kind}ValidityPeriod"]
    await world.admin(edit, period)
    shown = await read(world, argument, item,
                       "validityPeriod { value { startTime { ts } endTime { ts } } }")
    assert shown["validityPeriod"]["value"] == {"startTime": {"ts": START},
                                                "endTime": {"ts": START + 86_400_000}}
    # Open-ended, then none.
    done = await world.admin(edit, {"id": item, "s": START, "e": None})
    assert done[f"edit{kind}ValidityPeriod"]["validityPeriod"]["value"]["endTime"] is None
    done = await world.admin(edit, {"id": item, "s": None, "e": None})
    assert done[f"edit{kind}ValidityPeriod"]["validityPeriod"]["value"] is None
    assert 'Invalid argument "endTime"' in await world.admin.error(
        edit, {"id": item, "s": START, "e": START - 1})
    assert 'Invalid argument "id"' in await world.admin.error(
        edit, {"id": "f" * 24, "s": None, "e": None})


PASTE = """mutation($s: SvcId!, $st: String!, $t: SvcId!, $tt: String!, $a: [String!]!) {
  pasteAttributes(sourceId: $s, sourceType: $st, targetId: $t, targetType: $tt,
                  attributeTypes: $a) }"""
ALLOW_OFF = "timeSettings { allowTimeOffRecord { value path { id } } }"


async def test_paste_attributes(world: World) -> None:
    source, target = await new_tag(world), await new_person(world)
    await world.admin("mutation($id: SvcId!) { editTagDescription(id: $id, description: "
                      '"Night shift") { id } editTagColor(id: $id, color: "#ff0000") { id } '
                      "editTagValidityPeriod(id: $id, startTime: 1767225600000) { id } }",
                      {"id": source})
    before = (await read(world, "personId", target, ALLOW_OFF))["timeSettings"]
    wanted = not before["allowTimeOffRecord"]["value"]
    await world.admin("mutation($id: SvcId!, $v: Boolean) { editTagTimeSettingsAllowTimeOff"
                      "Record(id: $id, allowTimeOffRecord: $v) { id } }",
                      {"id": source, "v": wanted})
    paste = {"s": source, "st": "tag", "t": target, "tt": "person",
             "a": ["description", "color", "validityPeriod", "timeSettings"]}
    assert await world.employee.gql.denied(PASTE, paste) == ["Mutation.pasteAttributes"]
    assert (await world.admin(PASTE, paste))["pasteAttributes"] is True
    person = await read(world, "personId", target, "description color validityPeriod { "
                        "value { startTime { ts } } } " + ALLOW_OFF)
    assert (person["description"], person["color"]) == ("Night shift", "#ff0000")
    assert person["validityPeriod"]["value"] == {"startTime": {"ts": START}}
    assert person["timeSettings"]["allowTimeOffRecord"] == {"value": wanted,
                                                            "path": [{"id": target}]}
    # What cannot be pasted is named; nothing is half done.
    task = await new_task(world)
    assert 'Invalid argument "targetType"' in await world.admin.error(
        PASTE, {**paste, "t": task, "tt": "task", "a": ["description", "validityPeriod"]})
    assert (await read(world, "taskId", task, "description"))["description"] is None
    assert "'budgets' cannot be pasted" in await world.admin.error(
        PASTE, {**paste, "a": ["budgets"]})
    assert 'Invalid argument "sourceType"' in await world.admin.error(
        PASTE, {**paste, "st": "planet"})
    assert 'Invalid argument "sourceId"' in await world.admin.error(
        PASTE, {**paste, "s": "f" * 24})


async def test_duplicate_tag(world: World) -> None:
    parent, manager = await new_tag(world), await new_person(world)
    source = await tag(world.org, _name("Src"), parent)
    await world.admin("mutation($id: SvcId!) { editTagDescription(id: $id, description: "
                      '"Copied") { id } editTagColor(id: $id, color: "#00ff00") { id } }',
                      {"id": source})
    await world.admin(_pair("makeManagerOfTag", "managerId", "tagId"),
                      {"m": manager, "i": source})
    duplicate = ("mutation($id: SvcId!, $p: SvcId, $n: SvcName!) { duplicateTag(id: $id, "
                 "parentId: $p, name: $n) { id name description color level parent { id } "
                 "relations { managedBy { value { id } } } } }")
    assert await world.employee.gql.denied(duplicate, {"id": source, "n": "Copy"}) == [
        "Mutation.duplicateTag"]
    copy = (await world.admin(duplicate, {"id": source, "n": "Copy"}))["duplicateTag"]
    assert copy["id"] != source
    assert (copy["name"], copy["description"], copy["color"], copy["level"],
            copy["parent"]) == ("Copy", "Copied", "#00ff00", 1, {"id": parent})
    assert values(copy["relations"]["managedBy"]) == [manager]
    top = (await world.admin(duplicate, {"id": source, "n": "Top", "p": None}))["duplicateTag"]
    under = (await world.admin(duplicate, {"id": source, "n": "Under", "p": top["id"]}))
    assert under["duplicateTag"]["parent"] == {"id": top["id"]}
    assert under["duplicateTag"]["level"] == top["level"] + 1
    assert 'Invalid argument "parentId"' in await world.admin.error(
        duplicate, {"id": source, "n": "X", "p": "f" * 24})


async def test_reset_task_projects_relations(world: World) -> None:
    task, apollo = await new_task(world), await new_project(world)
    pair = "mutation($t: SvcId!, $p: SvcId!) { assignTaskToProject(taskId: $t, projectId: $p) { id } }"  # noqa: E501
    await world.admin(pair, {"t": task, "p": apollo})
    projects = "relations { projects { value { id } } }"
    assert values((await read(world, "taskId", task, projects))["relations"]["projects"]) == [
        apollo]
    planned = await read(world, "projectId", apollo,
                         "relations { relatedProjectsOfTask { value { id } } }")
    assert values(planned["relations"]["relatedProjectsOfTask"]) == [task]
    reset = "mutation($t: SvcId!) { resetTaskProjectsRelations(taskId: $t) { id } }"
    assert await world.employee.gql.denied(reset, {"t": task}) == [
        "Mutation.resetTaskProjectsRelations"]
    assert (await world.admin(reset, {"t": task}))["resetTaskProjectsRelations"]["id"] == task
    assert (await read(world, "taskId", task, projects))["relations"]["projects"] == []
    assert "is not planned on" in await world.admin.error(
        pair.replace("assignTaskToProject", "unassignTaskFromProject"), {"t": task, "p": apollo})
    assert 'Invalid argument "taskId"' in await world.admin.error(reset, {"t": "f" * 24})


async def test_the_operations_are_audited(world: World) -> None:
    trails = await world.admin(
        'query { getAuditTrails(operations: ["makeManagerOfTag", "editTaskDescription", '
        '"pasteAttributes", "assignScheduleTypeToPerson"]) { operationName } }')
    # Written by the tests before in this module (each module's organisation is its own).
    names = {t["operationName"] for t in trails["getAuditTrails"]}
    assert names == {"makeManagerOfTag", "editTaskDescription", "pasteAttributes",
                     "assignScheduleTypeToPerson"}


async def test_took_over_by(org: Org) -> None:
    bob = await org.add_member("Bob")
    assert (await org.admin.gql("{ tookOverBy { id } }"))["tookOverBy"] is None
    async with browser(org.live) as client:
        await sign_in(org.live, client, org.admin.email)
        csrf = csrf_of((await client.get("/account")).text)
        mine = await gql(client, "{ tookOverBy { id } }", csrf=csrf)
        assert mine["data"]["tookOverBy"] is None
        await gql(client, "mutation($t: SvcId!) { startTakeover(targetId: $t) { person { id } "
                  "} }", {"t": bob.id}, csrf=csrf)
        body = await gql(client, "{ tookOverBy { id name } currentPerson { id } }", csrf=csrf)
        assert body["data"] == {"tookOverBy": {"id": org.admin.id, "name": org.admin.name},
                                "currentPerson": {"id": bob.id}}


async def test_a_task_manager_approves_the_task_managers_stage(org: Org) -> None:
    bob = await org.add_member("Bob")
    tina = await org.add_member("Tina", role="manager")
    design = await add_task(org, "Design")  # no owner: its manager alone
    await org.admin.gql(_pair("makeManagerOfTask", "managerId", "taskId"),
                        {"m": tina.id, "i": design})
    await set_stages(org, [{"type": "tm"}])
    await add_record(bob, bob, task=design)
    event = await submit(bob, bob)
    assert event["status"] == "s"
    current = (await bob.gql(STATE, {"p": bob.id, "s": WEEK, "e": WEEK_END}))
    assert [p["id"] for p in current["getApprovalState"]["pendingApprovers"]] == [tina.id]
    assert (await approve(tina, event["id"]))["status"] == "a"


async def test_a_tasks_owner_and_potential_owners_are_read(world: World) -> None:
    task, owner, maybe = await new_task(world), await new_person(world), await new_person(world)
    for operation, person in (("assignOwnerOfTask", owner), ("assignTaskToPerson", maybe)):
        await world.admin(_pair(operation, "taskId", "personId"), {"m": task, "i": person})
    read_task = "relations { owner { value { id } } persons { value { id } } }"
    shown = (await read(world, "taskId", task, read_task))["relations"]
    assert (shown["owner"]["value"]["id"], values(shown["persons"])) == (owner, [maybe])
    of_owner = "relations { ownerOfTasks { value { id } } personsOfTask { value { id } } }"
    mine = (await read(world, "personId", owner, of_owner))["relations"]
    assert (values(mine["ownerOfTasks"]), mine["personsOfTask"]) == ([task], [])
    theirs = (await read(world, "personId", maybe, of_owner))["relations"]
    assert (theirs["ownerOfTasks"], values(theirs["personsOfTask"])) == ([], [task])
