"""The time settings that shape time entry, enforced through POST /graphql: `lockDate` on
adding, editing, moving, deleting and cloning time records (a project's own value beats the
owner's) and `forceComment` on editTimeRecordComment; each refusal names the setting."""

from __future__ import annotations

from tests.support import DAY_MS, HOUR_MS, Org

MONDAY = 1_773_619_200_000  # 2026-03-16T00:00:00Z, a Monday
ADD = ("mutation($p: SvcId!, $s: SvcTimestamp!, $pr: [SvcId]) { addTimeRecord(personId: $p,"
       " startTime: $s, duration: 3600000, projectIds: $pr) { id } }")
LOCK = ("mutation($v: SvcTimestamp, $id: SvcId!, $pv: SvcTimestamp) {"
        " editOrganisationTimeSettingsLockDate(lockDate: $v) { id }"
        " editProjectTimeSettingsLockDate(id: $id, lockDate: $pv) { id } }")
COMMENT = ("mutation($id: SvcId!, $c: String!) { editTimeRecordComment(id: $id, comment: $c)"
           " { comment } }")


async def test_lock_date_refuses_time_before_it(org: Org) -> None:
    bob = await org.add_member("Bob")
    project = (await org.admin.gql('mutation { addProject(name: "Apollo") { id } }'))[
        "addProject"]["id"]
    tuesday, thursday = MONDAY + DAY_MS + 9 * HOUR_MS, MONDAY + 3 * DAY_MS + 9 * HOUR_MS
    await org.admin.gql(LOCK, {"v": MONDAY + 2 * DAY_MS, "id": project, "pv": None})
    message = await bob.gql.error(ADD, {"p": bob.id, "s": tuesday, "pr": []})
    assert "lock time before 2026-03-18 00:00 UTC (lockDate of organisation" in message
    assert await bob.gql(ADD, {"p": bob.id, "s": thursday, "pr": []})
    # The project's own lock date wins for entries on it, in either direction.
    await org.admin.gql(LOCK, {"v": MONDAY + 2 * DAY_MS, "id": project, "pv": MONDAY})
    assert await bob.gql(ADD, {"p": bob.id, "s": tuesday, "pr": [project]})
    await org.admin.gql(LOCK, {"v": None, "id": project, "pv": MONDAY + 4 * DAY_MS})
    message = await bob.gql.error(ADD, {"p": bob.id, "s": thursday, "pr": [project]})
    assert "(lockDate of project Apollo)" in message
    assert await bob.gql(ADD, {"p": bob.id, "s": tuesday, "pr": []})
    # A person's own lock date beats the account's.
    await org.admin.gql("mutation($id: SvcId!) { editPersonTimeSettingsLockDate(id: $id,"
                        f" lockDate: {MONDAY + 5 * DAY_MS}) {{ id }} }}", {"id": bob.id})
    assert "(lockDate of person Bob)" in await bob.gql.error(
        ADD, {"p": bob.id, "s": thursday, "pr": []})


async def test_force_comment_keeps_a_comment(org: Org) -> None:
    bob = await org.add_member("Bob")
    record = (await bob.gql(ADD, {"p": bob.id, "s": MONDAY + 9 * HOUR_MS, "pr": []}))[
        "addTimeRecord"]["id"]
    assert await bob.gql(COMMENT, {"id": record, "c": ""})  # off by default
    await org.admin.gql("mutation { editOrganisationTimeSettingsForceComment("
                        "forceComment: true) { id } }")
    message = await bob.gql.error(COMMENT, {"id": record, "c": "  "})
    assert "require a comment on every time record (forceComment of organisation" in message
    assert (await bob.gql(COMMENT, {"id": record, "c": "Call"}))[
        "editTimeRecordComment"]["comment"] == "Call"
    await org.admin.gql("mutation($id: SvcId!) { editPersonTimeSettingsForceComment(id: $id,"
                        " forceComment: false) { id } }", {"id": bob.id})
    assert await bob.gql(COMMENT, {"id": record, "c": ""})


async def test_locked_time_is_not_changed(org: Org) -> None:
    bob = await org.add_member("Bob")
    early, late = MONDAY + 9 * HOUR_MS, MONDAY + 3 * DAY_MS + 9 * HOUR_MS
    ids = [(await bob.gql(ADD, {"p": bob.id, "s": start, "pr": []}))["addTimeRecord"]["id"]
           for start in (early, late)]
    await org.admin.gql("mutation { editOrganisationTimeSettingsLockDate("
                        f"lockDate: {MONDAY + 2 * DAY_MS}) {{ id }} }}")
    refusals = [
        ("mutation($id: SvcId!) { editTimeRecordDuration(id: $id, duration: 60000) { id } }",
         {"id": ids[0]}),
        ("mutation($id: SvcId!, $s: SvcTimestamp) { editTimeRecordStartTime(id: $id,"
         " startTime: $s) { id } }", {"id": ids[1], "s": early}),
        ("mutation($ids: [SvcId!]!) { deleteTimeRecords(ids: $ids) { id } }", {"ids": ids}),
        ("mutation($p: SvcId!, $a: SvcTimestamp!, $b: SvcTimestamp!, $c: SvcTimestamp!,"
         " $d: SvcTimestamp!) { cloneTimeRecords(personId: $p, sourceStartTime: $a,"
         " sourceEndTime: $b, targetStartTime: $c, targetEndTime: $d) { id } }",
         {"p": bob.id, "a": MONDAY + 3 * DAY_MS, "b": MONDAY + 4 * DAY_MS,
          "c": MONDAY - 4 * DAY_MS, "d": MONDAY - 3 * DAY_MS}),
    ]
    for query, variables in refusals:
        message = await bob.gql.error(query, variables)
        assert "(lockDate of organisation" in message, query
    records = await bob.gql("query($p: SvcId!) { getTimeRecords(filter: [{personId: $p}]) {"
                            " id duration startTime { ts } } }", {"p": bob.id})
    assert sorted((r["id"], r["duration"], r["startTime"]["ts"])
                  for r in records["getTimeRecords"]) == sorted(
        [(ids[0], 3_600_000, early), (ids[1], 3_600_000, late)])
    assert await bob.gql("mutation($id: SvcId!) { editTimeRecordDuration(id: $id,"
                         " duration: 60000) { id } }", {"id": ids[1]})
