"""Resubmission after rejection, self-approval, concurrency and the audit trail."""

from __future__ import annotations

import asyncio

from tests.service.test_approvals_support import (
    APPROVE,
    STATE,
    SUBMIT,
    WEEK,
    WEEK_END,
    add_project,
    add_record,
    add_task,
    approve,
    manage,
    pending_ids,
    reject,
    set_stages,
    state,
    submit,
)
from tests.support import DAY_MS, HOUR_MS, Org

DURATION = (
    "mutation($id: SvcId!, $d: Int!) { editTimeRecordDuration(id: $id, duration: $d) { id } }"
)
DELETE = "mutation($ids: [SvcId!]!) { deleteTimeRecords(ids: $ids) { id } }"


async def test_resubmission_reasks_only_managers_whose_projects_changed(org: Org) -> None:
    bob = await org.add_member("Bob")
    pam = await org.add_member("Pam", role="manager")
    zed = await org.add_member("Zed", role="manager")
    tom = await org.add_member("Tom")
    mia = await org.add_member("Mia", role="manager")
    await manage(org, mia, bob)
    apollo = await add_project(org, "Apollo", managers=(pam,))
    zeus = await add_project(org, "Zeus", managers=(zed,))
    task = await add_task(org, "Design", owner=tom)
    await set_stages(org, [{"type": "pm", "quorum": "all"}, {"type": "tm"}, {"type": "ppm"}])
    on_apollo = await add_record(bob, bob, day=0, projects=(apollo,))
    await add_record(bob, bob, day=1, projects=(zeus,))
    on_task = await add_record(bob, bob, day=2, task=task)
    await add_record(bob, bob, day=4, task=task)
    first = (await submit(bob, bob))["id"]
    await approve(pam, first)
    await approve(zed, first)
    await approve(tom, first)
    await reject(mia, first, 2, "Apollo looks high")

    # Bob changes an Apollo entry and adds a day off the projects, then resubmits.
    await bob.gql(DURATION, {"id": on_apollo, "d": HOUR_MS})
    added = await add_record(bob, bob, day=3)
    second = await submit(bob, bob)
    assert second["id"] != first and second["status"] == "s"
    assert second["timeRecordIds"] == {"added": [added], "modified": [on_apollo], "deleted": []}
    # The workflow restarts at the first stage; only Pam is asked again, Zed's approval stands.
    current = await state(bob, bob)
    assert current["currentStage"] == 0 and pending_ids(current) == {pam.id}
    assert [a["person"]["id"] for a in current["stageDetails"][0]["approvedBy"]] == [zed.id]
    # Tom's task did not change: his stage passes as soon as the project managers are done.
    after = await approve(pam, second["id"])
    assert after["stage"] == 2
    assert pending_ids(await state(bob, bob)) == {mia.id}
    await reject(mia, second["id"], 2, "still wrong")

    # Deleting the task entry re-asks Tom but neither project manager.
    await bob.gql(DELETE, {"ids": [on_task]})
    third = await submit(bob, bob)
    assert third["timeRecordIds"] == {"added": [], "modified": [], "deleted": [on_task]}
    assert third["stage"] == 1
    assert pending_ids(await state(bob, bob)) == {tom.id}
    await approve(tom, third["id"])
    assert (await approve(mia, third["id"]))["status"] == "a"


async def test_no_one_approves_their_own_timesheet(org: Org) -> None:
    pam = await org.add_member("Pam", role="manager")
    apollo = await add_project(org, "Apollo", managers=(pam,))
    await set_stages(org, [{"type": "pm"}])
    await add_record(pam, pam, projects=(apollo,))
    event = await submit(pam, pam)
    # Pam was the only project manager: the stage goes to the administrators, not skipped.
    assert event["status"] == "s"
    assert pending_ids(await state(pam, pam)) == {org.admin.id}
    assert "own timesheet" in await pam.gql.error(APPROVE, {"id": event["id"]})
    assert (await approve(org.admin, event["id"]))["status"] == "a"

    # An administrator is no exception, even with the override.
    zoe = await org.add_member("Zoe", role="admin")
    await set_stages(org, [{"type": "admin"}])
    await add_record(zoe, zoe)
    mine = await submit(zoe, zoe)
    assert pending_ids(await state(zoe, zoe)) == {org.admin.id}
    assert "no one may approve their own timesheet" in await zoe.gql.error(
        APPROVE, {"id": mine["id"]}
    )
    assert (await approve(org.admin, mine["id"]))["status"] == "a"


async def test_simultaneous_approvals_of_one_stage_count_once(org: Org) -> None:
    bob = await org.add_member("Bob")
    mia = await org.add_member("Mia", role="manager")
    max_ = await org.add_member("Max", role="manager")
    await manage(org, mia, bob)
    await manage(org, max_, bob)
    await set_stages(org, [{"type": "ppm", "quorum": "any"}, {"type": "admin"}])
    await add_record(bob, bob)
    submit_id = (await submit(bob, bob))["id"]
    bodies = await asyncio.gather(
        mia.gql.body(APPROVE, {"id": submit_id}), max_.gql.body(APPROVE, {"id": submit_id})
    )
    succeeded = [b for b in bodies if not b.get("errors")]
    failed = [b for b in bodies if b.get("errors")]
    assert len(succeeded) == 1 and len(failed) == 1
    assert succeeded[0]["data"]["approveTimesheet"]["stage"] == 1
    message = failed[0]["errors"][0]["message"]
    assert "stage 0: People managers has already been approved" in message
    assert "now at stage 1: Admins" in message
    current = await state(bob, bob)
    assert current["currentStage"] == 1
    assert len(current["stageDetails"][0]["approvedBy"]) == 1

    # "All": the same approver twice at once counts once.
    await set_stages(org, [{"type": "ppm", "quorum": "all"}])
    eve = await org.add_member("Eve")
    await manage(org, mia, eve)
    await manage(org, max_, eve)
    await add_record(eve, eve)
    eves = (await submit(eve, eve))["id"]
    bodies = await asyncio.gather(
        mia.gql.body(APPROVE, {"id": eves}), mia.gql.body(APPROVE, {"id": eves})
    )
    assert sorted(bool(b.get("errors")) for b in bodies) == [False, True]
    assert "already approved stage 0" in next(b for b in bodies if b.get("errors"))[
        "errors"][0]["message"]
    assert pending_ids(await state(eve, eve)) == {max_.id}


async def test_simultaneous_approvals_by_everyone_an_all_stage_needs_complete_it(
    org: Org,
) -> None:
    """Each of two approvals at once sees the other once it has the timesheet's lock: the
    stage is complete (and the timesheet approved) whichever comes second."""
    bob = await org.add_member("Bob")
    mia = await org.add_member("Mia", role="manager")
    max_ = await org.add_member("Max", role="manager")
    await manage(org, mia, bob)
    await manage(org, max_, bob)
    await set_stages(org, [{"type": "ppm", "quorum": "all"}])
    for index in range(3):
        period = {"p": bob.id, "s": WEEK + index * 7 * DAY_MS, "e": WEEK_END + index * 7 * DAY_MS}
        await add_record(bob, bob, day=index * 7)
        submit_id = (await bob.gql(SUBMIT, period))["submitTimesheet"]["id"]
        bodies = await asyncio.gather(
            mia.gql.body(APPROVE, {"id": submit_id}), max_.gql.body(APPROVE, {"id": submit_id})
        )
        assert not any(b.get("errors") for b in bodies), bodies
        assert sorted(b["data"]["approveTimesheet"]["status"] for b in bodies) == ["a", "s"]
        done = (await bob.gql(STATE, period))["getApprovalState"]
        assert done["status"] == "a"
        assert len(done["stageDetails"][0]["approvedBy"]) == 2


async def test_audit_trail_records_every_operation(org: Org) -> None:
    bob = await org.add_member("Bob")
    mia = await org.add_member("Mia", role="manager")
    await manage(org, mia, bob)
    await set_stages(org, [{"type": "ppm"}])
    await add_record(bob, bob)
    submit_id = (await submit(bob, bob))["id"]
    await reject(mia, submit_id, 0, "why so little")
    second = (await submit(bob, bob))["id"]
    await approve(mia, second)
    await org.admin.gql(
        "mutation { editOrganisationTimeSettingsApprovalReminder(approvalReminder: 3) { id } }"
    )
    await mia.gql(
        "mutation($p: [SvcId!]!, $s: SvcTimestamp!, $e: SvcTimestamp!) { sendTimesheetReminder("
        "personIds: $p, startTime: $s, endTime: $e) }",
        {"p": [bob.id], "s": WEEK, "e": WEEK_END},
    )
    trails = await org.admin.gql(
        "query($ops: [String]) { getAuditTrails(operations: $ops) { operationName person { id }"
        " responseId arguments { name value } } }",
        {"ops": ["editOrganisationApprovalStages", "submitTimesheet", "rejectTimesheet",
                 "approveTimesheet", "editOrganisationTimeSettingsApprovalReminder",
                 "sendTimesheetReminder"]},
    )
    seen = sorted((t["operationName"], t["person"]["id"]) for t in trails["getAuditTrails"])
    assert seen == sorted([
        ("editOrganisationApprovalStages", org.admin.id),
        ("submitTimesheet", bob.id),
        ("rejectTimesheet", mia.id),
        ("submitTimesheet", bob.id),
        ("approveTimesheet", mia.id),
        ("editOrganisationTimeSettingsApprovalReminder", org.admin.id),
        ("sendTimesheetReminder", mia.id),
    ])
    rejection = [t for t in trails["getAuditTrails"] if t["operationName"] == "rejectTimesheet"]
    assert rejection[0]["responseId"] == submit_id
    assert {"name": "comment", "value": "why so little"} in rejection[0]["arguments"]


async def test_simultaneous_submissions_of_one_period_submit_once(org: Org) -> None:
    bob = await org.add_member("Bob")
    mia = await org.add_member("Mia", role="manager")
    await manage(org, mia, bob)
    await set_stages(org, [{"type": "ppm"}])
    await add_record(bob, bob)
    variables = {"p": bob.id, "s": WEEK, "e": WEEK_END}
    bodies = await asyncio.gather(bob.gql.body(SUBMIT, variables),
                                  mia.gql.body(SUBMIT, variables))
    assert sorted(bool(b.get("errors")) for b in bodies) == [False, True]
    message = next(b for b in bodies if b.get("errors"))["errors"][0]["message"]
    assert "already submitted" in message or "just submitted by someone else" in message
    events = await bob.gql(
        "query($p: SvcId!) { getPersonApprovalEvents(personId: $p) { id } }", {"p": bob.id}
    )
    assert len(events["getPersonApprovalEvents"]) == 1
