"""Time records through POST /graphql: queries, filters, mutations, permissions, bad input,
the "Record time on these plannings" setting and the approval-workflow bridge."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import func, select

import service.time_records.time_records_resolvers as time_records_module
import service.time_records.writes as timerecords_writes_module
from plumbing.db import unit_of_work
from service.errors import RuleViolation
from service.models import (
    AbsenceType,
    AuditTrail,
    PersonManager,
    PersonTag,
    Project,
    ProjectCategory,
    ProjectTag,
    Tag,
    Task,
    TaskCategory,
    TimeRecord,
)
from tests.support import DAY_MS, HOUR_MS, Member, Org

MONDAY = 1_773_619_200_000  # 2026-03-16T00:00:00Z, a Monday
WEEK_MS = 7 * DAY_MS
UNKNOWN = "0123456789abcdef01234567"

FIELDS = """
  id duration comment nonBillable wfh
  startTime { ts iso } endTime { ts iso }
  person { id name } projects { id name } task { id name } absence { id name }
"""
ADD = f"""
mutation($start: SvcTimestamp!, $end: SvcTimestamp, $duration: Int!, $person: SvcId!,
         $task: SvcId, $absence: SvcId, $projects: [SvcId]) {{
  addTimeRecord(startTime: $start, endTime: $end, duration: $duration, personId: $person,
                taskId: $task, absenceId: $absence, projectIds: $projects) {{ {FIELDS} }}
}}"""
LIST = """
query($start: SvcTimestamp, $end: SvcTimestamp, $time: Boolean, $absence: Boolean,
      $wfh: Boolean, $filter: [SvcTimeRecordFilter]) {
  getTimeRecords(startTime: $start, endTime: $end, time: $time, absence: $absence, wfh: $wfh,
                 filter: $filter) { id }
  countTimeRecords(startTime: $start, endTime: $end, time: $time, absence: $absence, wfh: $wfh,
                   filter: $filter)
}"""


@dataclass
class World:
    """Structure made directly in the database (set-up, not under test)."""

    category: str  # project category
    other_category: str
    parent: str  # project with a subproject
    child: str
    other: str  # a project in the other category
    task_category: str
    other_task_category: str
    task: str  # in task_category
    other_task: str  # in other_task_category
    absence: str
    tag: str  # parent tag
    subtag: str


async def make_world(org: Org) -> World:
    now = org.live.clock.now_ms()
    async with unit_of_work(org.live.service.sessions) as session:
        org_id = org.id
        cat = ProjectCategory(organisation_id=org_id, name="Clients", level_names=[])
        cat2 = ProjectCategory(organisation_id=org_id, name="Internal", level_names=[])
        tcat = TaskCategory(organisation_id=org_id, name="Planning A", level_names=[])
        tcat2 = TaskCategory(organisation_id=org_id, name="Planning B", level_names=[])
        session.add_all([cat, cat2, tcat, tcat2])
        await session.flush()
        parent = Project(organisation_id=org_id, name="Apollo", category_id=cat.id,
                         created_ms=now)
        other = Project(organisation_id=org_id, name="Zeus", category_id=cat2.id, created_ms=now)
        session.add_all([parent, other])
        await session.flush()
        child = Project(organisation_id=org_id, name="Apollo 11", parent_id=parent.id,
                        category_id=cat.id, level=1, created_ms=now)
        task = Task(organisation_id=org_id, name="Design", category_id=tcat.id, created_ms=now)
        other_task = Task(organisation_id=org_id, name="Build", category_id=tcat2.id,
                          created_ms=now)
        absence = AbsenceType(organisation_id=org_id, name="Vacation", unit="day")
        tag = Tag(organisation_id=org_id, name="Europe", level=0, settings={}, created_ms=now)
        session.add_all([child, task, other_task, absence, tag])
        await session.flush()
        subtag = Tag(organisation_id=org_id, name="France", parent_id=tag.id, level=1,
                     settings={}, created_ms=now)
        session.add(subtag)
        await session.flush()
        return World(cat.id, cat2.id, parent.id, child.id, other.id, tcat.id, tcat2.id,
                     task.id, other_task.id, absence.id, tag.id, subtag.id)


async def manage(org: Org, manager: Member, person: Member) -> None:
    async with unit_of_work(org.live.service.sessions) as session:
        session.add(PersonManager(organisation_id=org.id, manager_id=manager.id,
                                  person_id=person.id, created_ms=0))


async def tag_person(org: Org, tag_id: str, person: Member) -> None:
    async with unit_of_work(org.live.service.sessions) as session:
        session.add(PersonTag(organisation_id=org.id, tag_id=tag_id, person_id=person.id))


async def tag_project(org: Org, tag_id: str, project_id: str) -> None:
    async with unit_of_work(org.live.service.sessions) as session:
        session.add(ProjectTag(organisation_id=org.id, tag_id=tag_id, project_id=project_id))


async def add(who: Member, person: Member, start: int, duration: int = HOUR_MS,
              **more: Any) -> dict[str, Any]:
    data = await who.gql(ADD, {"start": start, "duration": duration, "person": person.id, **more})
    return data["addTimeRecord"]  # type: ignore[no-any-return]


async def listed(who: Member, **variables: Any) -> list[str]:
    data = await who.gql(LIST, variables)
    ids = [item["id"] for item in data["getTimeRecords"]]
    assert data["countTimeRecords"] == len(ids)
    return ids


async def record_count(org: Org) -> int:
    async with unit_of_work(org.live.service.sessions) as session:
        count = await session.scalar(
            select(func.count()).select_from(TimeRecord).where(TimeRecord.organisation_id == org.id)
        )
    return int(count or 0)


# ------------------------------------------------------------------------------- add / get


async def test_add_and_get_a_time_record(org: Org) -> None:
    world = await make_world(org)
    bob = await org.add_member("Bob")
    start = MONDAY + 9 * HOUR_MS
    record = await add(org.admin, bob, start, 2 * HOUR_MS, end=start + 3 * HOUR_MS,
                       task=world.task, projects=[world.other, world.parent])
    assert record["duration"] == 7_200_000
    assert record["startTime"] == {"ts": start, "iso": "2026-03-16T09:00:00.000Z"}
    assert record["endTime"]["ts"] == start + 3 * HOUR_MS
    assert record["person"] == {"id": bob.id, "name": "Bob"}
    assert [p["name"] for p in record["projects"]] == ["Apollo", "Zeus"]
    assert record["task"] == {"id": world.task, "name": "Design"}
    assert record["absence"] is None
    assert (record["comment"], record["nonBillable"], record["wfh"]) == ("", False, False)

    fetched = await bob.gql(f'{{ getTimeRecord(id: "{record["id"]}") {{ {FIELDS} }} }}')
    assert fetched["getTimeRecord"] == record

    absence = await add(bob, bob, MONDAY, 8 * HOUR_MS, absence=world.absence)
    assert absence["absence"] == {"id": world.absence, "name": "Vacation"}
    assert absence["endTime"] is None and absence["projects"] == []

    async with unit_of_work(org.live.service.sessions) as session:
        trail = (await session.scalars(
            select(AuditTrail).where(AuditTrail.organisation_id == org.id,
                                     AuditTrail.operation_name == "addTimeRecord")
        )).all()
    assert {entry.response_id for entry in trail} == {record["id"], absence["id"]}


async def test_bad_input_names_the_argument_and_writes_nothing(org: Org) -> None:
    world = await make_world(org)
    bob = await org.add_member("Bob")
    gql = org.admin.gql
    base = {"start": MONDAY, "duration": HOUR_MS, "person": bob.id}
    assert 'Invalid argument "duration"' in await gql.error(ADD, {**base, "duration": -1})
    assert 'Invalid argument "endTime"' in await gql.error(ADD, {**base, "end": MONDAY - 1})
    message = await gql.error(ADD, {**base, "projects": [world.parent, UNKNOWN]})
    assert 'Invalid argument "projectIds[1]"' in message
    assert 'Invalid argument "taskId"' in await gql.error(ADD, {**base, "task": UNKNOWN})
    assert 'Invalid argument "absenceId"' in await gql.error(ADD, {**base, "absence": UNKNOWN})
    assert 'Invalid argument "personId"' in await gql.error(ADD, {**base, "person": UNKNOWN})
    assert "SvcId" in await gql.error(ADD, {**base, "task": "nope"})
    assert await record_count(org) == 0

    message = await gql.error(LIST, {"filter": [{"personId": bob.id, "following": "OR"}, {}]})
    assert 'Invalid argument "filter[1]"' in message and "names no field" in message
    message = await gql.error(LIST, {"start": MONDAY, "end": MONDAY - 1})
    assert 'Invalid argument "endTime"' in message
    message = await gql.error(f'{{ getTimeRecord(id: "{UNKNOWN}") {{ id }} }}')
    assert 'Invalid argument "id"' in message


# ------------------------------------------------------------------------------- visibility


async def test_who_sees_and_edits_which_records(org: Org) -> None:
    bob = await org.add_member("Bob")
    carol = await org.add_member("Carol")
    mia = await org.add_member("Mia", role="manager")
    await manage(org, mia, carol)
    own = await add(bob, bob, MONDAY)
    carols = await add(carol, carol, MONDAY + DAY_MS)
    mias = await add(mia, mia, MONDAY + 2 * DAY_MS)

    assert await listed(bob) == [own["id"]]
    assert await listed(carol) == [carols["id"]]
    assert await listed(mia) == [carols["id"], mias["id"]]
    assert await listed(org.admin) == [own["id"], carols["id"], mias["id"]]
    # a filter cannot widen what one sees
    assert await listed(bob, filter=[{"personId": carol.id}]) == []

    get = 'query($id: SvcId!) { getTimeRecord(id: $id) { id } }'
    assert await bob.gql.denied(get, {"id": carols["id"]}) == ["Query.getTimeRecord"]
    assert (await mia.gql(get, {"id": carols["id"]}))["getTimeRecord"]["id"] == carols["id"]
    assert await mia.gql.denied(get, {"id": own["id"]}) == ["Query.getTimeRecord"]

    # employees write only their own records; managers those of their people too
    denied = await bob.gql.denied(ADD, {"start": MONDAY, "duration": 1, "person": carol.id})
    assert denied == ["Mutation.addTimeRecord"]
    comment = 'mutation($id: SvcId!) { editTimeRecordComment(id: $id, comment: "x") { id } }'
    assert await bob.gql.denied(comment, {"id": carols["id"]}) == [
        "Mutation.editTimeRecordComment"
    ]
    # a manager passes the access check on their people's records; whether the timesheet
    # may be edited in its status is then the approval workflow's decision (a draft: no)
    body = await mia.gql.body(comment, {"id": carols["id"]})
    assert not body.get("permissionsErrors"), body
    remove = 'mutation($ids: [SvcId!]!) { deleteTimeRecords(ids: $ids) { id } }'
    denied = await bob.gql.denied(remove, {"ids": [own["id"], carols["id"]]})
    assert denied == ["Mutation.deleteTimeRecords"]
    assert await record_count(org) == 3  # all or nothing: bob's own record is still there


# ------------------------------------------------------------------------------- edits


async def test_edit_mutations(org: Org) -> None:
    world = await make_world(org)
    bob = await org.add_member("Bob")
    record = await add(bob, bob, MONDAY + 9 * HOUR_MS, end=MONDAY + 10 * HOUR_MS)
    rid = record["id"]
    gql = bob.gql

    async def edit(field: str, argument: str, value: Any, kind: str) -> dict[str, Any]:
        data = await gql(
            f"mutation($id: SvcId!, $v: {kind}) {{ {field}(id: $id, {argument}: $v) "
            f"{{ {FIELDS} }} }}",
            {"id": rid, "v": value},
        )
        return data[field]  # type: ignore[no-any-return]

    moved = await edit("editTimeRecordStartTime", "startTime", MONDAY + 8 * HOUR_MS,
                       "SvcTimestamp")
    assert moved["startTime"]["ts"] == MONDAY + 8 * HOUR_MS
    ended = await edit("editTimeRecordEndTime", "endTime", MONDAY + 12 * HOUR_MS, "SvcTimestamp")
    assert ended["endTime"]["ts"] == MONDAY + 12 * HOUR_MS
    shorter = await edit("editTimeRecordDuration", "duration", 5400000, "Int!")
    assert shorter["duration"] == 5400000
    projects = await edit("editTimeRecordProjects", "projectIds", [world.child, world.child],
                          "[SvcId]!")
    assert [p["id"] for p in projects["projects"]] == [world.child]
    assert (await edit("editTimeRecordTask", "taskId", world.task, "SvcId!"))["task"]["id"] == (
        world.task
    )
    absence = await edit("editTimeRecordAbsence", "absenceId", world.absence, "SvcId!")
    assert absence["absence"]["id"] == world.absence
    assert (await edit("editTimeRecordComment", "comment", "hi", "String!"))["comment"] == "hi"
    assert (await edit("editTimeRecordNonBillable", "nonBillable", True, "Boolean!"))[
        "nonBillable"
    ] is True
    assert (await edit("editTimeRecordWfh", "wfh", True, "Boolean!"))["wfh"] is True
    cleared = await edit("editTimeRecordEndTime", "endTime", None, "SvcTimestamp")
    assert cleared["endTime"] is None
    assert (await edit("editTimeRecordProjects", "projectIds", [], "[SvcId]!"))["projects"] == []

    # bad input names the argument and changes nothing
    message = await gql.error(
        'mutation($id: SvcId!) { editTimeRecordDuration(id: $id, duration: -5) { id } }',
        {"id": rid},
    )
    assert 'Invalid argument "duration"' in message
    await edit("editTimeRecordEndTime", "endTime", MONDAY + 9 * HOUR_MS, "SvcTimestamp")
    message = await gql.error(
        "mutation($id: SvcId!, $t: SvcTimestamp) { editTimeRecordEndTime(id: $id, endTime: $t)"
        " { id } }",
        {"id": rid, "t": MONDAY},
    )
    assert 'Invalid argument "endTime"' in message
    message = await gql.error(
        "mutation($id: SvcId!, $t: SvcTimestamp) { editTimeRecordStartTime(id: $id, "
        "startTime: $t) { id } }",
        {"id": rid, "t": MONDAY + 10 * HOUR_MS},
    )
    assert 'Invalid argument "startTime"' in message
    message = await gql.error(
        "mutation($id: SvcId!, $p: [SvcId]!) { editTimeRecordProjects(id: $id, projectIds: $p)"
        " { id } }",
        {"id": rid, "p": [world.parent, UNKNOWN]},
    )
    assert 'Invalid argument "projectIds[1]"' in message
    for field, argument in (("editTimeRecordTask", "taskId"),
                            ("editTimeRecordAbsence", "absenceId")):
        message = await gql.error(
            f'mutation($id: SvcId!) {{ {field}(id: $id, {argument}: "{UNKNOWN}") {{ id }} }}',
            {"id": rid},
        )
        assert f'Invalid argument "{argument}"' in message
    final = (await gql(f'{{ getTimeRecord(id: "{rid}") {{ {FIELDS} }} }}'))["getTimeRecord"]
    assert final["duration"] == 5400000 and final["projects"] == []
    assert final["startTime"]["ts"] == MONDAY + 8 * HOUR_MS


# ------------------------------------------------------------------------------- queries


async def test_period_and_flags(org: Org) -> None:
    world = await make_world(org)
    bob = await org.add_member("Bob")
    work = await add(bob, bob, MONDAY)
    off = await add(bob, bob, MONDAY + DAY_MS, absence=world.absence)
    home = await add(bob, bob, MONDAY + WEEK_MS)
    await bob.gql(f'mutation {{ editTimeRecordWfh(id: "{home["id"]}", wfh: true) {{ id }} }}')

    assert await listed(bob, start=MONDAY, end=MONDAY + WEEK_MS) == [work["id"], off["id"]]
    assert await listed(bob, start=MONDAY + DAY_MS) == [off["id"], home["id"]]
    assert await listed(bob, end=MONDAY + DAY_MS) == [work["id"]]
    assert await listed(bob, time=True) == [work["id"], home["id"]]
    assert await listed(bob, absence=True) == [off["id"]]
    assert await listed(bob, wfh=True) == [home["id"]]
    assert await listed(bob, wfh=False) == [work["id"], off["id"], home["id"]]


async def test_every_filter_field(org: Org) -> None:
    w = await make_world(org)
    bob = await org.add_member("Bob")
    carol = await org.add_member("Carol")
    await tag_person(org, w.subtag, carol)
    await tag_project(org, w.subtag, w.other)
    on_parent = await add(org.admin, bob, MONDAY, projects=[w.parent], task=w.task)
    on_child = await add(org.admin, bob, MONDAY + DAY_MS, 2 * HOUR_MS, projects=[w.child],
                         end=MONDAY + DAY_MS + 2 * HOUR_MS)
    on_other = await add(org.admin, carol, MONDAY + 2 * DAY_MS, projects=[w.other],
                         task=w.other_task)
    off = await add(org.admin, carol, MONDAY + 3 * DAY_MS, absence=w.absence)
    a, b, c, d = (r["id"] for r in (on_parent, on_child, on_other, off))
    cases: list[tuple[dict[str, Any], list[str]]] = [
        ({"id": a}, [a]),
        ({"notId": a}, [b, c, d]),
        ({"personId": carol.id}, [c, d]),
        ({"notPersonId": carol.id}, [a, b]),
        ({"personIds": [bob.id, carol.id]}, [a, b, c, d]),
        ({"startTime": MONDAY + DAY_MS}, [b, c, d]),
        ({"endTime": MONDAY + DAY_MS + HOUR_MS}, [a]),
        ({"endTime": MONDAY + DAY_MS + 2 * HOUR_MS}, [a, b]),
        ({"projectIds": [w.parent]}, [a, b]),  # subprojects included
        ({"projectIds": [w.child]}, [b]),
        ({"notProjectIds": [w.parent]}, [c, d]),
        ({"taskIds": [w.task]}, [a]),
        ({"notTaskIds": [w.task]}, [b, c, d]),
        ({"projectTagIds": [w.tag]}, [c]),  # tags below included
        ({"projectNotTagIds": [w.tag]}, [a, b, d]),
        ({"personTagIds": [w.tag]}, [c, d]),
        ({"personNotTagIds": [w.subtag]}, [a, b]),
        ({"projectCategoryIds": [w.category]}, [a, b]),
        ({"notProjectCategoryIds": [w.category]}, [c, d]),
        ({"taskCategoryIds": [w.other_task_category]}, [c]),
        ({"notTaskCategoryIds": [w.other_task_category]}, [a, b, d]),
        ({"isAbsence": True}, [d]),
        ({"isAbsence": False}, [a, b, c]),
    ]
    for item, expected in cases:
        assert await listed(org.admin, filter=[item]) == expected, item
    # chaining: AND by default, OR when asked, left to right
    chained = [{"personId": bob.id, "following": "OR"}, {"isAbsence": True}]
    assert await listed(org.admin, filter=chained) == [a, b, d]
    both = [{"personId": carol.id}, {"isAbsence": False}]
    assert await listed(org.admin, filter=both) == [c]


# ------------------------------------------------------------------------------- loading

NESTED = """
  id duration comment nonBillable wfh startTime { ts iso } endTime { ts iso }
  person { id name email role { name } }
  projects { id name level category { id name } parent { id name } }
  task { id name category { id name } }
  absence { id name unit }
  event { id }
"""


async def test_a_list_reads_each_record_as_a_single_get_does(org: Org) -> None:
    """getTimeRecords loads only the relationships a query names (projects in the same SQL
    query as the records): whatever the query's shape, a record reads as getTimeRecord has it."""
    w = await make_world(org)
    bob = await org.add_member("Bob")
    mia = await org.add_member("Mia", role="manager")
    await manage(org, mia, bob)
    two = await add(bob, bob, MONDAY, task=w.task, projects=[w.other, w.child])
    off = await add(bob, bob, MONDAY + DAY_MS, absence=w.absence)
    bare = await add(mia, mia, MONDAY + 2 * DAY_MS)
    get = f"query($id: SvcId!) {{ getTimeRecord(id: $id) {{ {NESTED} }} }}"
    for who, ids in ((bob, [two, off]), (mia, [two, off, bare]), (org.admin, [two, off, bare])):
        expected = [(await who.gql(get, {"id": r["id"]}))["getTimeRecord"] for r in ids]
        listed_records = (await who.gql(f"{{ getTimeRecords {{ {NESTED} }} }}"))["getTimeRecords"]
        assert listed_records == expected
    assert [p["name"] for p in expected[0]["projects"]] == ["Apollo 11", "Zeus"]
    assert expected[0]["projects"][0]["parent"] == {"id": w.parent, "name": "Apollo"}

    # a record on two projects is listed once, with both, also when a filter names one
    on_child = await bob.gql(
        "query($p: [SvcId]) { getTimeRecords(filter: [{projectIds: $p}]) { id projects { id } } }",
        {"p": [w.child]},
    )
    assert on_child["getTimeRecords"] == [
        {"id": two["id"], "projects": [{"id": w.child}, {"id": w.other}]}
    ]
    # fragments, inline fragments and aliases ask for relationships too
    shaped = await bob.gql(
        """query {
          ids: getTimeRecords { id }
          some: getTimeRecords { ...Some }
          time: getTimeRecords(time: true) { ... on SvcTimeRecord { who: person { name } } }
        }
        fragment Some on SvcTimeRecord { id length: duration work: task { name } projects { name } }
        """
    )
    assert shaped["ids"] == [{"id": two["id"]}, {"id": off["id"]}]
    assert shaped["some"] == [
        {"id": two["id"], "length": HOUR_MS, "work": {"name": "Design"},
         "projects": [{"name": "Apollo 11"}, {"name": "Zeus"}]},
        {"id": off["id"], "length": HOUR_MS, "work": None, "projects": []},
    ]
    assert shaped["time"] == [{"who": {"name": "Bob"}}]


# ------------------------------------------------------------------------------- delete, clone


async def test_delete_time_records(org: Org) -> None:
    bob = await org.add_member("Bob")
    first = await add(bob, bob, MONDAY)
    second = await add(bob, bob, MONDAY + DAY_MS)
    remove = 'mutation($ids: [SvcId!]!) { deleteTimeRecords(ids: $ids) { id duration } }'
    message = await bob.gql.error(remove, {"ids": [first["id"], UNKNOWN]})
    assert 'Invalid argument "ids[1]"' in message
    data = await bob.gql(remove, {"ids": [first["id"], first["id"]]})
    assert data["deleteTimeRecords"] == [{"id": first["id"], "duration": HOUR_MS}]
    assert await listed(bob) == [second["id"]]


CLONE = """
mutation($person: SvcId!, $ss: SvcTimestamp!, $se: SvcTimestamp!, $ts: SvcTimestamp!,
         $te: SvcTimestamp!, $replace: Boolean) {
  cloneTimeRecords(personId: $person, sourceStartTime: $ss, sourceEndTime: $se,
                   targetStartTime: $ts, targetEndTime: $te, replaceExisting: $replace) {
    id startTime { ts } endTime { ts } duration comment wfh projects { id } task { id }
  }
}"""


async def test_clone_time_records(org: Org) -> None:
    world = await make_world(org)
    bob = await org.add_member("Bob")
    carol = await org.add_member("Carol")
    monday = await add(bob, bob, MONDAY + 9 * HOUR_MS, end=MONDAY + 10 * HOUR_MS,
                       projects=[world.parent], task=world.task)
    await bob.gql(f'mutation {{ editTimeRecordComment(id: "{monday["id"]}", comment: "c") '
                  "{ id } }")
    await add(bob, bob, MONDAY + 6 * DAY_MS, absence=world.absence)  # Sunday
    next_week = await add(bob, bob, MONDAY + WEEK_MS + DAY_MS)
    week = {"person": bob.id, "ss": MONDAY, "se": MONDAY + WEEK_MS, "ts": MONDAY + WEEK_MS,
            "te": MONDAY + 2 * WEEK_MS}

    clones = (await bob.gql(CLONE, week))["cloneTimeRecords"]
    assert [c["startTime"]["ts"] for c in clones] == [
        MONDAY + WEEK_MS + 9 * HOUR_MS, MONDAY + WEEK_MS + 6 * DAY_MS]
    assert clones[0]["endTime"]["ts"] == MONDAY + WEEK_MS + 10 * HOUR_MS
    assert clones[0]["comment"] == "c" and clones[0]["projects"] == [{"id": world.parent}]
    assert clones[0]["task"] == {"id": world.task}
    target = {"start": MONDAY + WEEK_MS, "end": MONDAY + 2 * WEEK_MS}
    assert len(await listed(bob, **target)) == 3  # kept the existing record

    replaced = (await bob.gql(CLONE, {**week, "replace": True}))["cloneTimeRecords"]
    after = await listed(bob, **target)
    assert after == [c["id"] for c in replaced] and next_week["id"] not in after

    # a shorter target period takes only the copies that start inside it
    short = {**week, "ts": MONDAY + 3 * WEEK_MS, "te": MONDAY + 3 * WEEK_MS + DAY_MS}
    assert len((await bob.gql(CLONE, short))["cloneTimeRecords"]) == 1

    assert await bob.gql.denied(CLONE, {**week, "person": carol.id}) == [
        "Mutation.cloneTimeRecords"
    ]
    overlap = {**week, "ts": MONDAY + DAY_MS, "te": MONDAY + 8 * DAY_MS}
    assert 'Invalid argument "targetStartTime"' in await bob.gql.error(CLONE, overlap)
    backwards = {**week, "te": MONDAY + WEEK_MS}
    assert 'Invalid argument "targetEndTime"' in await bob.gql.error(CLONE, backwards)
    assert 'Invalid argument "sourceEndTime"' in await bob.gql.error(
        CLONE, {**week, "se": MONDAY})


# ------------------------------------------------------------------------------- plannings

ORG_PLANNINGS = """mutation($c: [SvcId]) {
  editOrganisationTimeSettingsTaskCategories(taskCategories: $c) { id } }"""
TAG_PLANNINGS = """mutation($id: SvcId!, $c: [SvcId]) {
  editTagTimeSettingsTaskCategories(id: $id, taskCategories: $c) { id name } }"""
PERSON_PLANNINGS = """mutation($id: SvcId!, $c: [SvcId]) {
  editPersonTimeSettingsTaskCategories(id: $id, taskCategories: $c) { id name } }"""
REFUSAL = "timesheet settings do not allow recording time on this task"


async def test_record_time_on_these_plannings(org: Org) -> None:
    w = await make_world(org)
    bob = await org.add_member("Bob")
    carol = await org.add_member("Carol")
    admin = org.admin.gql
    base = {"start": MONDAY, "duration": HOUR_MS, "person": bob.id}
    anywhere = await add(bob, bob, MONDAY, task=w.other_task)  # nothing set: every task

    await admin(ORG_PLANNINGS, {"c": [w.task_category]})
    assert REFUSAL in await bob.gql.error(ADD, {**base, "task": w.other_task})
    allowed = await add(bob, bob, MONDAY, task=w.task)
    move = "mutation($id: SvcId!, $t: SvcId!) { editTimeRecordTask(id: $id, taskId: $t) { id } }"
    assert REFUSAL in await bob.gql.error(move, {"id": allowed["id"], "t": w.other_task})
    # a record already on a task may keep being edited
    await bob.gql(move, {"id": anywhere["id"], "t": w.other_task})

    # tag beats organisation, the deeper tag beats its parent, the person beats tags
    await tag_person(org, w.tag, bob)
    await tag_person(org, w.subtag, bob)
    await admin(TAG_PLANNINGS, {"id": w.tag, "c": [w.task_category]})
    await admin(TAG_PLANNINGS, {"id": w.subtag, "c": [w.other_task_category]})
    await add(bob, bob, MONDAY, task=w.other_task)
    assert REFUSAL in await bob.gql.error(ADD, {**base, "task": w.task})
    await admin(PERSON_PLANNINGS, {"id": bob.id, "c": [w.task_category]})
    await bob.gql(move, {"id": allowed["id"], "t": w.task})
    assert REFUSAL in await bob.gql.error(ADD, {**base, "task": w.other_task})
    await admin(PERSON_PLANNINGS, {"id": bob.id, "c": None})  # back to the tags
    await add(bob, bob, MONDAY, task=w.other_task)
    # carol has no tag: the organisation's list applies, also when the admin records for her
    assert REFUSAL in await admin.error(ADD, {**base, "person": carol.id, "task": w.other_task})
    await admin(ORG_PLANNINGS, {"c": None})
    await add(org.admin, carol, MONDAY, task=w.other_task)

    # cloning onto a planning no longer allowed is refused as well
    await admin(PERSON_PLANNINGS, {"id": bob.id, "c": []})
    clone = {"person": bob.id, "ss": MONDAY, "se": MONDAY + DAY_MS, "ts": MONDAY + WEEK_MS,
             "te": MONDAY + WEEK_MS + DAY_MS}
    assert REFUSAL in await bob.gql.error(CLONE, clone)

    assert await bob.gql.denied(ORG_PLANNINGS, {"c": []}) == [
        "Mutation.editOrganisationTimeSettingsTaskCategories"
    ]
    assert await bob.gql.denied(PERSON_PLANNINGS, {"id": bob.id, "c": None}) == [
        "Mutation.editPersonTimeSettingsTaskCategories"
    ]
    message = await admin.error(TAG_PLANNINGS, {"id": w.tag, "c": [w.task_category, UNKNOWN]})
    assert 'Invalid argument "taskCategories[1]"' in message
    assert 'Invalid argument "id"' in await admin.error(TAG_PLANNINGS, {"id": UNKNOWN, "c": []})


# ------------------------------------------------------------------------------- bridge


async def test_every_write_goes_through_the_approval_bridge(
    org: Org, monkeypatch: pytest.MonkeyPatch
) -> None:
    bob = await org.add_member("Bob")
    guarded: list[tuple[str, int]] = []
    recorded: list[tuple[str, int, str, str]] = []
    locked_from: list[int] = []

    async def guard(context: Any, owner_id: str, start_ms: int,
                    absence_id: str | None = None) -> None:
        guarded.append((owner_id, start_ms))
        if locked_from and start_ms >= locked_from[0]:
            raise RuleViolation("The timesheet of this period is locked")

    async def record(context: Any, owner_id: str, start_ms: int, record_id: str,
                     change: str, absence_id: str | None = None) -> None:
        recorded.append((owner_id, start_ms, record_id, change))

    for module in (time_records_module, timerecords_writes_module):
        monkeypatch.setattr(module, "guard_time_record_change", guard)
        monkeypatch.setattr(module, "record_time_record_change", record)

    created = await add(bob, bob, MONDAY)
    rid = created["id"]
    assert guarded == [(bob.id, MONDAY)]
    assert recorded == [(bob.id, MONDAY, rid, "added")]

    guarded.clear()
    recorded.clear()
    await bob.gql(f'mutation {{ editTimeRecordStartTime(id: "{rid}", startTime: {MONDAY + DAY_MS})'
                  " { id } }")
    assert guarded == [(bob.id, MONDAY), (bob.id, MONDAY + DAY_MS)]
    assert recorded == [  # both periods hear of a move
        (bob.id, MONDAY, rid, "modified"), (bob.id, MONDAY + DAY_MS, rid, "modified")]

    # a locked period refuses moving a record into it, and the refusal writes nothing
    locked_from.append(MONDAY + WEEK_MS)
    message = await bob.gql.error(
        f'mutation {{ editTimeRecordStartTime(id: "{rid}", startTime: {MONDAY + WEEK_MS}) '
        "{ id } }"
    )
    assert "locked" in message
    assert await listed(bob, start=MONDAY + DAY_MS, end=MONDAY + 2 * DAY_MS) == [rid]
    assert "locked" in await bob.gql.error(
        ADD, {"start": MONDAY + WEEK_MS, "duration": 1, "person": bob.id})
    assert await record_count(org) == 1

    recorded.clear()
    await bob.gql(f'mutation {{ deleteTimeRecords(ids: ["{rid}"]) {{ id }} }}')
    assert recorded == [(bob.id, MONDAY + DAY_MS, rid, "deleted")]
