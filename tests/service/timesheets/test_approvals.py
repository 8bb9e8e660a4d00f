"""The timesheet workflow through POST /graphql: configuration at three levels, approver
types, quorum, skipped stages, the transitions and who may make them."""

from __future__ import annotations

from tests.service.test_approvals_support import (
    APPROVE,
    PENDING,
    REJECT,
    SUBMIT,
    WEEK,
    WEEK_END,
    add_project,
    add_record,
    add_tag,
    add_task,
    approve,
    manage,
    pending_ids,
    reject,
    set_stages,
    state,
    submit,
)
from tests.support import Org

PERSON_STAGES = (
    "query($id: SvcId!) { getPerson(id: $id) { approvalStages { value { type quorum "
    "persons { id } tags { id } } path { id collection name } } } }"
)


async def test_no_workflow_approves_at_once(org: Org) -> None:
    bob = await org.add_member("Bob")
    await add_record(bob, bob)
    event = await submit(bob, bob)
    assert event["status"] == "a" and event["submitId"] == event["id"]
    current = await state(bob, bob)
    assert current["status"] == "a" and current["pendingApprovers"] == []
    # A submitted or approved period cannot be submitted again.
    message = await bob.gql.error(SUBMIT, {"p": bob.id, "s": WEEK, "e": WEEK_END})
    assert "already approved" in message


async def test_stage_configuration_levels_most_specific_wins(org: Org) -> None:
    bob = await org.add_member("Bob")
    eve = await org.add_member("Eve")
    carl = await org.add_member("Carl")
    mia = await org.add_member("Mia", role="manager")
    await manage(org, mia, bob)
    await manage(org, mia, eve)
    ops = await add_tag(org, "Ops", (bob,))

    account = await set_stages(org, [{"type": "admin", "quorum": "ALL"}])
    assert account["approvalStages"]["value"] == [
        {"type": "admin", "quorum": "all", "persons": [], "tags": []}
    ]
    assert account["approvalStages"]["path"][0]["collection"] == "organisations"
    await org.admin.gql(
        "mutation($id: SvcId!, $s: [SvcApprovalStageInput]) { editTagApprovalStages(id: $id, "
        "stages: $s) { id approvalStages { value { type quorum } path { collection } } } }",
        {"id": ops, "s": [{"type": "ppm", "quorum": "2"}]},
    )
    await org.admin.gql(
        "mutation($id: SvcId!, $s: [SvcApprovalStageInput]) { editPersonApprovalStages(id: $id,"
        " stages: $s) { id } }",
        {"id": bob.id, "s": [{"type": "person", "personIds": [carl.id]}]},
    )
    own = (await bob.gql(PERSON_STAGES, {"id": bob.id}))["getPerson"]["approvalStages"]
    assert own["value"][0]["type"] == "person" and own["path"][0]["collection"] == "persons"
    # Eve has no tag and no stages of her own: the account's.
    eves = (await mia.gql(PERSON_STAGES, {"id": eve.id}))["getPerson"]["approvalStages"]
    assert eves["value"][0]["type"] == "admin" and eves["path"][0]["id"] == org.id
    # Bob's own stages win at submission: Carl is asked.
    await add_record(bob, bob)
    event = await submit(bob, bob)
    assert pending_ids(await state(bob, bob)) == {carl.id}
    await approve(carl, event["id"])
    # Without person stages, the tag's stages apply.
    await org.admin.gql(
        "mutation($id: SvcId!) { editPersonApprovalStages(id: $id, stages: null) { id } }",
        {"id": bob.id},
    )
    tagged = (await bob.gql(PERSON_STAGES, {"id": bob.id}))["getPerson"]["approvalStages"]
    assert tagged["value"] == [{"type": "ppm", "quorum": "2", "persons": [], "tags": []}]
    assert tagged["path"][0] == {"id": ops, "collection": "tags", "name": "Ops"}
    # Someone else's configuration is not for an employee to read.
    denied = await bob.gql.denied(PERSON_STAGES, {"id": eve.id})
    assert denied == ["SvcPerson.approvalStages"]


async def test_stage_configuration_is_validated_and_admin_only(org: Org) -> None:
    bob = await org.add_member("Bob")
    mutation = (
        "mutation($s: [SvcApprovalStageInput]) { editOrganisationApprovalStages(stages: $s) "
        "{ id } }"
    )
    assert await bob.gql.denied(mutation, {"s": [{"type": "admin"}]}) == [
        "Mutation.editOrganisationApprovalStages"
    ]
    message = await org.admin.gql.error(mutation, {"s": [{"type": "person"}]})
    assert message.startswith('Invalid argument "stages[0].personIds"')
    message = await org.admin.gql.error(mutation, {"s": [{"type": "tag", "tagIds": []}]})
    assert message.startswith('Invalid argument "stages[0].tagIds"')
    message = await org.admin.gql.error(
        mutation, {"s": [{"type": "admin"}, {"type": "pm", "quorum": "most"}]}
    )
    assert message.startswith('Invalid argument "stages[1].quorum"')
    message = await org.admin.gql.error(
        mutation, {"s": [{"type": "person", "personIds": ["0" * 24]}]}
    )
    assert message.startswith('Invalid argument "stages[0].personIds[0]"')
    message = await org.admin.gql.error(mutation, {"s": [{"type": "boss"}]})
    assert "SvcApprovalStageType" in message
    # The default stage: Project managers, quorum Any.
    stages = await set_stages(org, [{"type": "pm"}])
    assert stages["approvalStages"]["value"][0]["quorum"] == "any"


async def test_five_stage_workflow_with_mixed_quorums(org: Org) -> None:
    bob = await org.add_member("Bob")
    pam = await org.add_member("Pam", role="manager")
    mia = await org.add_member("Mia", role="manager")
    max_ = await org.add_member("Max", role="manager")
    tom = await org.add_member("Tom")
    fin = [await org.add_member(f"Fin{i}") for i in range(3)]
    await manage(org, mia, bob)
    await manage(org, max_, bob)
    apollo = await add_project(org, "Apollo", managers=(pam,))
    task = await add_task(org, "Design", owner=tom)
    finance = await add_tag(org, "Finance", tuple(fin))
    await set_stages(org, [
        {"type": "pm", "quorum": "any"},
        {"type": "ppm", "quorum": "all"},
        {"type": "tm"},
        {"type": "tag", "tagIds": [finance], "quorum": "2"},
        {"type": "admin", "quorum": "any"},
    ])
    await add_record(bob, bob, day=0, projects=(apollo,))
    await add_record(bob, bob, day=1, task=task)
    event = await submit(bob, bob)
    submit_id = event["id"]
    assert (event["status"], event["stage"]) == ("s", 0)

    current = await state(bob, bob)
    assert current["currentStageType"] == "pm" and pending_ids(current) == {pam.id}
    assert [d["type"] for d in current["stageDetails"]] == ["pm", "ppm", "tm", "tag", "admin"]
    mine = (await pam.gql(PENDING))["getPendingApprovals"]
    assert [p["submitId"] for p in mine] == [submit_id]
    assert mine[0]["totalDuration"] == 4 * 3_600_000
    assert (await mia.gql(PENDING))["getPendingApprovals"] == []
    # Not (yet) Mia's turn.
    assert await mia.gql.denied(APPROVE, {"id": submit_id}) == ["Mutation.approveTimesheet"]

    assert (await approve(pam, submit_id))["stage"] == 1
    assert pending_ids(await state(bob, bob)) == {mia.id, max_.id}
    # "All": one of two is not enough, and one approval counts once.
    assert (await approve(mia, submit_id))["stage"] == 1
    assert pending_ids(await state(bob, bob)) == {max_.id}
    assert "already approved stage 1" in await mia.gql.error(APPROVE, {"id": submit_id})
    assert (await approve(max_, submit_id))["stage"] == 2
    assert pending_ids(await state(bob, bob)) == {tom.id}
    assert (await approve(tom, submit_id))["stage"] == 3
    # A quorum of 2 among three tagged people.
    assert pending_ids(await state(bob, bob)) == {f.id for f in fin}
    assert (await approve(fin[0], submit_id))["stage"] == 3
    assert (await approve(fin[2], submit_id))["stage"] == 4
    # Pam's stage has moved on: refused, naming the current stage.
    message = await pam.gql.error(APPROVE, {"id": submit_id})
    assert "stage 0: Project managers has already been approved" in message
    assert "now at stage 4: Admins" in message
    final = await approve(org.admin, submit_id)
    assert final["status"] == "a"
    done = await state(bob, bob)
    assert done["status"] == "a" and done["pendingApprovers"] == []
    approved_by = [[a["person"]["id"] for a in d["approvedBy"]] for d in done["stageDetails"]]
    assert approved_by == [[pam.id], [mia.id, max_.id], [tom.id], [fin[0].id, fin[2].id],
                           [org.admin.id]]
    # The approved timesheet stays locked for its owner.
    message = await bob.gql.error(
        "mutation($s: SvcTimestamp!, $p: SvcId!) { addTimeRecord(startTime: $s, duration: 1000,"
        " personId: $p) { id } }",
        {"s": WEEK + 3_600_000, "p": bob.id},
    )
    assert "approved and locked for its owner" in message


async def test_parent_project_manager_approves_subprojects(org: Org) -> None:
    bob = await org.add_member("Bob")
    boss = await org.add_member("Boss", role="manager")
    sub_manager = await org.add_member("Sam", role="manager")
    parent = await add_project(org, "Parent", managers=(boss,))
    child = await add_project(org, "Child", parent=parent, managers=(sub_manager,))
    await set_stages(org, [{"type": "pm", "quorum": "all"}])
    await add_record(bob, bob, projects=(child,))
    event = await submit(bob, bob)
    assert pending_ids(await state(bob, bob)) == {boss.id, sub_manager.id}
    await approve(boss, event["id"])
    assert (await approve(sub_manager, event["id"]))["status"] == "a"


async def test_stage_without_eligible_approver_is_skipped(org: Org) -> None:
    bob = await org.add_member("Bob")
    mia = await org.add_member("Mia", role="manager")
    await manage(org, mia, bob)
    await set_stages(org, [{"type": "tm"}, {"type": "ppm"}, {"type": "pm"}])
    await add_record(bob, bob)  # no task, no project
    event = await submit(bob, bob)
    assert event["stage"] == 1
    current = await state(bob, bob)
    assert [d["skipped"] for d in current["stageDetails"]] == [True, False, True]
    assert (await approve(mia, event["id"]))["status"] == "a"
    # Every stage empty: approved at once.
    eve = await org.add_member("Eve")
    await add_record(eve, eve)
    assert (await submit(eve, eve))["status"] == "a"


async def test_reject_needs_comment_and_current_stage_and_unlocks(org: Org) -> None:
    bob = await org.add_member("Bob")
    pam = await org.add_member("Pam", role="manager")
    mia = await org.add_member("Mia", role="manager")
    await manage(org, mia, bob)
    apollo = await add_project(org, "Apollo", managers=(pam,))
    await set_stages(org, [{"type": "pm"}, {"type": "ppm"}])
    await add_record(bob, bob, projects=(apollo,))
    submit_id = (await submit(bob, bob))["id"]
    message = await pam.gql.error(REJECT, {"id": submit_id, "st": 0, "c": "  "})
    assert message.startswith('Invalid argument "comment": a reason is always required')
    message = await pam.gql.error(REJECT, {"id": submit_id, "st": 1, "c": "no"})
    assert "stage 0: Project managers" in message
    assert await mia.gql.denied(REJECT, {"id": submit_id, "st": 0, "c": "no"}) == [
        "Mutation.rejectTimesheet"
    ]
    assert "own timesheet" in await bob.gql.error(REJECT, {"id": submit_id, "st": 0, "c": "x"})
    assert "locked for its owner" in await bob.gql.error(
        "mutation($s: SvcTimestamp!, $p: SvcId!) { addTimeRecord(startTime: $s, duration: 1000,"
        " personId: $p) { id } }", {"s": WEEK + 3_600_000, "p": bob.id},
    )
    rejected = await reject(pam, submit_id, 0, "Apollo hours are too high")
    assert rejected["status"] == "r" and rejected["rejectedStage"] == 0
    assert rejected["comment"] == "Apollo hours are too high"
    # Unlocked for its owner; a second rejection is refused.
    await add_record(bob, bob, day=2)
    assert "rejected" in await pam.gql.error(REJECT, {"id": submit_id, "st": 0, "c": "x"})
    assert "rejected" in await pam.gql.error(APPROVE, {"id": submit_id})
    # Passing a non-submit event id is named.
    events = await bob.gql(
        "query($p: SvcId!) { getPersonApprovalEvents(personId: $p) { id submitId status } }",
        {"p": bob.id},
    )
    reject_event = next(e for e in events["getPersonApprovalEvents"] if e["id"] != submit_id)
    assert 'Invalid argument "id"' in await pam.gql.error(APPROVE, {"id": reject_event["id"]})


async def test_administrator_may_approve_or_reject_any_submitted(org: Org) -> None:
    bob = await org.add_member("Bob")
    pam = await org.add_member("Pam", role="manager")
    apollo = await add_project(org, "Apollo", managers=(pam,))
    await set_stages(org, [{"type": "pm"}, {"type": "pm"}])
    await add_record(bob, bob, projects=(apollo,))
    submit_id = (await submit(bob, bob))["id"]
    assert (await approve(org.admin, submit_id))["status"] == "a"
    # Approved: rejected by an admin or a last-stage approver (Pam is one).
    assert (await reject(pam, submit_id, 1, "wrong week"))["status"] == "r"
    second = (await submit(bob, bob))["id"]
    assert second != submit_id
    assert (await reject(org.admin, second, 0, "needs a comment"))["status"] == "r"


async def test_approved_timesheet_rejected_only_by_admin_or_last_stage(org: Org) -> None:
    bob = await org.add_member("Bob")
    pam = await org.add_member("Pam", role="manager")
    mia = await org.add_member("Mia", role="manager")
    await manage(org, mia, bob)
    apollo = await add_project(org, "Apollo", managers=(pam,))
    await set_stages(org, [{"type": "pm"}, {"type": "ppm"}])
    await add_record(bob, bob, projects=(apollo,))
    submit_id = (await submit(bob, bob))["id"]
    await approve(pam, submit_id)
    assert (await approve(mia, submit_id))["status"] == "a"
    assert await pam.gql.denied(REJECT, {"id": submit_id, "st": 1, "c": "late"}) == [
        "Mutation.rejectTimesheet"
    ]
    assert "stage 1" in await mia.gql.error(REJECT, {"id": submit_id, "st": 0, "c": "late"})
    assert (await reject(mia, submit_id, 1, "late"))["status"] == "r"


async def test_submitting_someone_elses_timesheet(org: Org) -> None:
    bob = await org.add_member("Bob")
    eve = await org.add_member("Eve")
    mia = await org.add_member("Mia", role="manager")
    await manage(org, mia, bob)
    assert await eve.gql.denied(SUBMIT, {"p": bob.id, "s": WEEK, "e": WEEK_END}) == [
        "Mutation.submitTimesheet"
    ]
    message = await bob.gql.error(SUBMIT, {"p": bob.id, "s": WEEK_END, "e": WEEK})
    assert message.startswith('Invalid argument "endTime"')
    event = await submit(mia, bob)
    assert event["by"]["id"] == mia.id and event["person"]["id"] == bob.id
    # An overlapping period with other bounds is refused, naming the existing one.
    message = await bob.gql.error(SUBMIT, {"p": bob.id, "s": WEEK + 86_400_000,
                                           "e": WEEK_END + 86_400_000})
    assert "overlaps the approved timesheet for 2026-03-02 to 2026-03-08" in message


async def test_queries_show_only_what_the_caller_may_see(org: Org) -> None:
    bob = await org.add_member("Bob")
    eve = await org.add_member("Eve")
    pam = await org.add_member("Pam", role="manager")
    apollo = await add_project(org, "Apollo", managers=(pam,))
    await set_stages(org, [{"type": "pm"}])
    await add_record(bob, bob, projects=(apollo,))
    submit_id = (await submit(bob, bob))["id"]
    by_id = "query($id: SvcId!) { getApprovalEventById(id: $id) { id status person { id } } }"
    assert (await pam.gql(by_id, {"id": submit_id}))["getApprovalEventById"]["status"] == "s"
    assert await eve.gql.denied(by_id, {"id": submit_id}) == ["Query.getApprovalEventById"]
    assert (await eve.gql(PENDING, {"all": True}))["getPendingApprovals"] == []
    everything = (await org.admin.gql(PENDING, {"all": True}))["getPendingApprovals"]
    assert [p["submitId"] for p in everything] == [submit_id]
    assert (await org.admin.gql(PENDING))["getPendingApprovals"] == []
    team = await org.admin.gql(
        "query($ids: [SvcId!]!, $s: SvcTimestamp!, $e: SvcTimestamp!) { getTeamApprovalStates("
        "personIds: $ids, startTime: $s, endTime: $e) { person { id } status currentStage "
        "currentStageType totalDuration pendingApprovers { id } } }",
        {"ids": [bob.id, eve.id], "s": WEEK, "e": WEEK_END},
    )
    assert [(t["person"]["id"], t["status"], t["currentStageType"])
            for t in team["getTeamApprovalStates"]] == [(bob.id, "s", "pm"), (eve.id, "d", None)]
    own = await eve.gql(
        "query($ids: [SvcId!]!, $s: SvcTimestamp!, $e: SvcTimestamp!) { getTeamApprovalStates("
        "personIds: $ids, startTime: $s, endTime: $e) { person { id } } }",
        {"ids": [bob.id, eve.id], "s": WEEK, "e": WEEK_END},
    )
    assert [t["person"]["id"] for t in own["getTeamApprovalStates"]] == [eve.id]
    events = await eve.gql(
        "query($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { getApprovalEvents(personId:"
        " $p, startTime: $s, endTime: $e) { id } }", {"p": bob.id, "s": WEEK, "e": WEEK_END},
    )
    assert events["getApprovalEvents"] == []
    denied = await eve.gql.denied(
        "query($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { getApprovalState(personId:"
        " $p, startTime: $s, endTime: $e) { status } }", {"p": bob.id, "s": WEEK, "e": WEEK_END},
    )
    assert denied == ["Query.getApprovalState"]
    records = await bob.gql(
        "query($s: SvcTimestamp!, $e: SvcTimestamp!) { getTimeRecords(startTime: $s, "
        "endTime: $e) { id event { id status stage } } }", {"s": WEEK, "e": WEEK_END},
    )
    assert [r["event"]["id"] for r in records["getTimeRecords"]] == [submit_id]


async def test_time_records_filter_by_approval_status(org: Org) -> None:
    bob = await org.add_member("Bob")
    mia = await org.add_member("Mia", role="manager")
    await manage(org, mia, bob)
    await set_stages(org, [{"type": "ppm"}])
    submitted = await add_record(bob, bob)
    await submit(bob, bob)
    later = await bob.gql(
        "mutation($s: SvcTimestamp!, $p: SvcId!) { addTimeRecord(startTime: $s, duration: "
        "3600000, personId: $p) { id } }", {"s": WEEK_END + 3_600_000, "p": bob.id},
    )
    draft = later["addTimeRecord"]["id"]
    query = (
        "query($f: [SvcTimeRecordFilter]) { getTimeRecords(filter: $f) { id } }"
    )
    for status, expected in (("s", [submitted]), ("d", [draft]), ("a", [])):
        found = await bob.gql(query, {"f": [{"personId": bob.id}, {"status": status}]})
        assert [r["id"] for r in found["getTimeRecords"]] == expected, status
    assert "SvcApprovalStatus" in await bob.gql.error(query, {"f": [{"status": "x"}]})
