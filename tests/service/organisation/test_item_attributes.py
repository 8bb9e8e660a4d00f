"""Item attributes through POST /graphql (issue #25): descriptions (people, projects, tags,
tasks) and validity periods (people, projects, tags), pasteAttributes, duplicateTag, the
audit trail of these operations, and Query.tookOverBy; as an administrator and as an
employee (refused), with bad arguments and unknown ids named. One organisation per backend
for the module (`world`)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.service.access_support import tag
from tests.service.relations_support import (
    START,
    World,
    duo,
    new_person,
    new_project,
    new_tag,
    new_task,
    read,
    unique,
    values,
    world,
)
from tests.support import Org
from tests.timebot.signin_support import browser, csrf_of, gql, sign_in

__all__ = ["world"]  # the module's fixture


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
    source = await tag(world.org, unique("Src"), parent)
    await world.admin("mutation($id: SvcId!) { editTagDescription(id: $id, description: "
                      '"Copied") { id } editTagColor(id: $id, color: "#00ff00") { id } }',
                      {"id": source})
    await world.admin(duo("makeManagerOfTag", "managerId", "tagId"),
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


async def test_the_operations_are_audited(org: Org) -> None:
    person = await org.add_member("Pat")
    made = await org.admin.gql('mutation { addTag(name: "dev") { id } addTask(name: "Plan") '
                               "{ id } }")
    tag_id, task = made["addTag"]["id"], made["addTask"]["id"]
    await org.admin.gql(duo("makeManagerOfTag", "managerId", "tagId"),
                        {"m": person.id, "i": tag_id})
    await org.admin.gql('mutation($t: SvcId!) { editTaskDescription(id: $t, description: "x") '
                        "{ id } }", {"t": task})
    await org.admin.gql(PASTE, {"s": tag_id, "st": "tag", "t": person.id, "tt": "person",
                                "a": ["description"]})
    trails = await org.admin.gql(
        'query { getAuditTrails(operations: ["makeManagerOfTag", "editTaskDescription", '
        '"pasteAttributes"]) { operationName arguments { name value } } }')
    found = {t["operationName"]: {a["name"]: a["value"] for a in t["arguments"]}
             for t in trails["getAuditTrails"]}
    assert set(found) == {"makeManagerOfTag", "editTaskDescription", "pasteAttributes"}
    assert found["makeManagerOfTag"]["tagId"] == tag_id
