"""Links through POST /graphql (issue #25): schedule types' access lists, subprojects offered
under a project, tasks offered to tags, tagging (people, projects, tasks) and its start time,
managers of tags and tasks and the resets of what a person manages, a task's projects and
owners read back; every operation as an administrator and as an employee (refused), read
back on both sides, repeated, and with unknown ids named. One organisation per backend for
the module (`world`); each case makes its own items."""

from __future__ import annotations

from typing import Any

import pytest

from tests.service.access_support import project
from tests.service.relations_support import (
    START,
    World,
    duo,
    new_person,
    new_project,
    new_schedule,
    new_subproject,
    new_tag,
    new_task,
    read,
    values,
    world,
)
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
from tests.support import Org

__all__ = ["world"]  # the module's fixture


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
    assert await world.employee.gql.denied(duo(assign, member_argument, item_argument),
                                           pair) == [f"Mutation.{assign}"]
    first = (await world.admin(duo(assign, member_argument, item_argument), pair))[assign]
    assert (first["sourceId"], first["sourceKey"], first["targetId"], first["targetKey"]) == (
        member, source_key, item, target_key)
    again = (await world.admin(duo(assign, member_argument, item_argument), pair))[assign]
    assert again["id"] == first["id"]  # a retry returns the same link
    await world.admin(duo(assign, member_argument, item_argument), {"m": member, "i": other})
    mine = await read(world, member_argument, member,
                      f"relations {{ {member_read} {{ relationId value {{ id }} }} }}")
    assert sorted(values(mine["relations"][member_read])) == sorted([item, other])
    theirs = await read(world, item_argument, item,
                        f"relations {{ {item_read} {{ relationId value {{ id }} }} }}")
    assert values(theirs["relations"][item_read]) == [member]
    gone = (await world.admin(duo(unassign, member_argument, item_argument), pair))[unassign]
    assert gone["id"] == first["id"]
    assert "is not assigned" in await world.admin.error(
        duo(unassign, member_argument, item_argument), pair)
    reset_query = f"mutation($m: SvcId!) {{ {reset}({member_argument}: $m) {{ id }} }}"
    assert await world.employee.gql.denied(reset_query, {"m": member}) == [f"Mutation.{reset}"]
    assert (await world.admin(reset_query, {"m": member}))[reset]["id"] == member
    mine = await read(world, member_argument, member, f"relations {{ {member_read} {{ "
                      "relationId } }")
    assert mine["relations"][member_read] == []
    # Unknown ids are named, never a server error.
    assert f'Invalid argument "{item_argument}"' in await world.admin.error(
        duo(assign, member_argument, item_argument), {"m": member, "i": "f" * 24})
    assert f'Invalid argument "{member_argument}"' in await world.admin.error(
        reset_query, {"m": "f" * 24})


async def test_a_subproject_offered_under_a_project_is_available_there(world: World) -> None:
    apollo, gemini = await new_project(world), await new_project(world)
    api = await project(world.org, "API", gemini)
    available = """query($pr: SvcId!, $p: SvcId!) {
      getAvailableSubProjects(projectId: $pr, personId: $p) { id } }"""
    who = {"pr": apollo, "p": world.employee.id}
    assert (await world.admin(available, who))["getAvailableSubProjects"] == []
    await world.admin(duo("assignSubProjectToProject", "projectId", "subProjectId"),
                      {"m": apollo, "i": api})
    assert (await world.admin(available, who))["getAvailableSubProjects"] == [{"id": api}]
    # A top-level project is no subproject; a project is not offered under itself.
    assert "is not a subproject" in await world.admin.error(
        duo("assignSubProjectToProject", "projectId", "subProjectId"),
        {"m": apollo, "i": gemini})
    assert "cannot be linked to itself" in await world.admin.error(
        duo("assignSubProjectToProject", "projectId", "subProjectId"), {"m": api, "i": api})


TAGGINGS = [("Person", "personId", new_person, "persons", "getPerson"),
            ("Project", "projectId", new_project, "projects", "getProject"),
            ("Task", "taskId", new_task, "tasks", "getTask")]
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
    assert await world.employee.gql.denied(duo(make, "managerId", argument), pair) == [
        f"Mutation.{make}"]
    made = (await world.admin(duo(make, "managerId", argument), pair))[make]
    assert (made["sourceId"], made["sourceKey"], made["targetId"], made["targetKey"]) == (
        manager, "managerOf", item, "managedBy")
    assert (await world.admin(duo(make, "managerId", argument), pair))[make]["id"] == made["id"]
    await world.admin(duo(make, "managerId", argument), {"m": manager, "i": other})
    by = await world.admin(f"query($id: SvcId!) {{ {getter}(id: $id) {{ relations {{ "
                           "managedBy { relationId value { id } } } } }", {"id": item})
    assert by[getter]["relations"]["managedBy"] == [{"relationId": made["id"],
                                                      "value": {"id": manager}}]
    of = f"relations {{ managerOf {{ {key} {{ value {{ id }} }} }} }}"
    mine = await read(world, "personId", manager, of)
    assert sorted(values(mine["relations"]["managerOf"][key])) == sorted([item, other])
    assert (await world.admin(duo(remove, "managerId", argument), pair))[remove]["id"] == \
        made["id"]
    assert "is not a manager of" in await world.admin.error(
        duo(remove, "managerId", argument), pair)
    reset = f"mutation($m: SvcId!) {{ resetManaged{kind}s(managerId: $m) {{ id }} }}"
    assert await world.employee.gql.denied(reset, {"m": manager}) == [
        f"Mutation.resetManaged{kind}s"]
    await world.admin(reset, {"m": manager})
    assert (await read(world, "personId", manager, of))["relations"]["managerOf"][key] == []
    assert 'Invalid argument "managerId"' in await world.admin.error(
        duo(make, "managerId", argument), {"m": "f" * 24, "i": item})
    assert f'Invalid argument "{argument}"' in await world.admin.error(
        duo(make, "managerId", argument), {"m": manager, "i": "f" * 24})


async def test_reset_managed_persons_and_projects_read(world: World) -> None:
    manager, person, apollo = await new_person(world), await new_person(world), \
        await new_project(world)
    await world.admin(duo("makeManagerOfPerson", "managerId", "personId"),
                      {"m": manager, "i": person})
    await world.admin(duo("makeManagerOfProject", "managerId", "projectId"),
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


async def test_a_task_manager_approves_the_task_managers_stage(org: Org) -> None:
    bob = await org.add_member("Bob")
    tina = await org.add_member("Tina", role="manager")
    design = await add_task(org, "Design")  # no owner: its manager alone
    await org.admin.gql(duo("makeManagerOfTask", "managerId", "taskId"),
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
        await world.admin(duo(operation, "taskId", "personId"), {"m": task, "i": person})
    read_task = "relations { owner { value { id } } persons { value { id } } }"
    shown = (await read(world, "taskId", task, read_task))["relations"]
    assert (shown["owner"]["value"]["id"], values(shown["persons"])) == (owner, [maybe])
    of_owner = "relations { ownerOfTasks { value { id } } personsOfTask { value { id } } }"
    mine = (await read(world, "personId", owner, of_owner))["relations"]
    assert (values(mine["ownerOfTasks"]), mine["personsOfTask"]) == ([task], [])
    theirs = (await read(world, "personId", maybe, of_owner))["relations"]
    assert (theirs["ownerOfTasks"], values(theirs["personsOfTask"])) == ([], [task])
