"""Edit rights by status for approvers who are not the owner's managers (no access by role):
a current-stage approver edits a submitted timesheet (the workflow restarts from the first
stage), the rejecting approver corrects a rejected one in place; the two settings still
remove those rights, and anybody else is still refused."""

from __future__ import annotations

from tests.service.legacy.test_legacy import legacy_for
from tests.service.test_approvals_support import (
    WEEK,
    add_project,
    add_record,
    approve,
    manage,
    pending_ids,
    reject,
    set_stages,
    state,
    submit,
)
from tests.service.timesheets.test_approvals_edits import setting
from tests.support import DAY_MS, HOUR_MS, Member, Org

DURATION = (
    "mutation($id: SvcId!, $d: Int!) { editTimeRecordDuration(id: $id, duration: $d)"
    " { id duration } }"
)
ADD = (
    "mutation($s: SvcTimestamp!, $p: SvcId!) { addTimeRecord(startTime: $s, duration: 3600000,"
    " personId: $p) { id } }"
)
DELETE = "mutation($ids: [SvcId!]!) { deleteTimeRecords(ids: $ids) { id } }"


async def duration_of(org: Org, record: str) -> int:
    data = await org.admin.gql(
        "query($id: SvcId!) { getTimeRecord(id: $id) { duration } }", {"id": record})
    value: int = data["getTimeRecord"]["duration"]
    return value


async def restarts_by(org: Org, owner: Member) -> list[str]:
    events = await org.admin.gql(
        "query($p: SvcId!) { getPersonApprovalEvents(personId: $p) { systemAction by { id } } }",
        {"p": owner.id},
    )
    return [e["by"]["id"] for e in events["getPersonApprovalEvents"]
            if e["systemAction"] == "restartAfterApproverEdit"]


async def team(org: Org) -> tuple[Member, Member, Member, Member, str]:
    """Bob (employee) managed by Mia; Pam manages the project Apollo only; Eve is nobody's."""
    bob = await org.add_member("Bob")
    mia = await org.add_member("Mia", role="manager")
    pam = await org.add_member("Pam")
    eve = await org.add_member("Eve", role="manager")
    await manage(org, mia, bob)
    apollo = await add_project(org, "Apollo", managers=(pam,))
    record = await add_record(bob, bob, projects=(apollo,))
    return bob, mia, pam, eve, record


async def test_current_stage_approver_edits_submitted_and_workflow_restarts(org: Org) -> None:
    bob, mia, pam, eve, record = await team(org)
    await set_stages(org, [{"type": "ppm"}, {"type": "pm"}])
    submit_id = (await submit(bob, bob))["id"]
    # Stage 0 (People managers): Pam is not its approver and not Bob's manager.
    assert await pam.gql.denied(DURATION, {"id": record, "d": HOUR_MS}) == [
        "Mutation.editTimeRecordDuration"]
    await approve(mia, submit_id)
    assert (await state(org.admin, bob))["currentStage"] == 1

    # Stage 1 (Project managers): Pam may edit, in one request with an addition; the
    # workflow restarts once, from the first stage.
    body = await pam.gql.body(
        "mutation($id: SvcId!, $s: SvcTimestamp!, $p: SvcId!) {"
        " editTimeRecordDuration(id: $id, duration: 10800000) { id duration }"
        " addTimeRecord(startTime: $s, duration: 3600000, personId: $p) { id } }",
        {"id": record, "s": WEEK + DAY_MS + 9 * HOUR_MS, "p": bob.id},
    )
    assert "errors" not in body and "permissionsErrors" not in body, body
    assert body["data"]["editTimeRecordDuration"] == {"id": record, "duration": 3 * HOUR_MS}
    assert await duration_of(org, record) == 3 * HOUR_MS
    restarted = await state(org.admin, bob)
    assert restarted["status"] == "s" and restarted["currentStage"] == 0
    assert pending_ids(restarted) == {mia.id}
    assert await restarts_by(org, bob) == [pam.id]

    # Back at stage 0, Pam is no current approver: refused, nothing written.
    assert await pam.gql.denied(DURATION, {"id": record, "d": HOUR_MS}) == [
        "Mutation.editTimeRecordDuration"]
    assert await duration_of(org, record) == 3 * HOUR_MS
    # Someone who is neither an approver nor Bob's manager never may.
    await approve(mia, submit_id)
    for query, variables in ((DURATION, {"id": record, "d": HOUR_MS}),
                             (ADD, {"s": WEEK + 9 * HOUR_MS, "p": bob.id}),
                             (DELETE, {"ids": [record]})):
        assert len(await eve.gql.denied(query, variables)) == 1
    assert await duration_of(org, record) == 3 * HOUR_MS
    assert (await state(org.admin, bob))["currentStage"] == 1


async def test_rejecting_approver_corrects_rejected_timesheet_in_place(org: Org) -> None:
    bob, _mia, pam, eve, record = await team(org)
    second = await org.add_member("Sam")
    apollo2 = await add_project(org, "Gemini", managers=(second,))
    await add_record(bob, bob, day=1, projects=(apollo2,))
    await set_stages(org, [{"type": "pm"}])
    submit_id = (await submit(bob, bob))["id"]
    await reject(pam, submit_id, 0, "Tuesday is 3 hours")

    data = await pam.gql(DURATION, {"id": record, "d": 3 * HOUR_MS})
    assert data["editTimeRecordDuration"]["duration"] == 3 * HOUR_MS
    extra = (await pam.gql(ADD, {"s": WEEK + 2 * DAY_MS + 9 * HOUR_MS, "p": bob.id}))
    await pam.gql(DELETE, {"ids": [extra["addTimeRecord"]["id"]]})
    current = await state(org.admin, bob)
    assert current["status"] == "r", current  # corrected in place: no restart
    assert await restarts_by(org, bob) == []
    assert await duration_of(org, record) == 3 * HOUR_MS

    # Another approver of the same stage who did not reject, and an outsider: refused.
    for who in (second, eve):
        assert await who.gql.denied(DURATION, {"id": record, "d": HOUR_MS}) == [
            "Mutation.editTimeRecordDuration"]
    assert await duration_of(org, record) == 3 * HOUR_MS


async def refused_approver(org: Org, name: str, *, per_person: bool = False) -> None:
    bob, _mia, pam, _eve, record = await team(org)
    await set_stages(org, [{"type": "pm"}])
    await setting(org, name, True, person=bob if per_person else None)
    submit_id = (await submit(bob, bob))["id"]
    assert await pam.gql.denied(DURATION, {"id": record, "d": HOUR_MS}) == [
        "Mutation.editTimeRecordDuration"]
    await reject(pam, submit_id, 0, "please fix")
    assert await pam.gql.denied(DURATION, {"id": record, "d": HOUR_MS}) == [
        "Mutation.editTimeRecordDuration"]
    assert await duration_of(org, record) == 2 * HOUR_MS
    assert (await state(org.admin, bob))["status"] == "r"


async def test_owner_or_admin_only_removes_the_approvers_rights(org: Org) -> None:
    await refused_approver(org, "OwnerOrAdminOnly")


async def test_only_admin_edits_others_removes_the_approvers_rights(org: Org) -> None:
    await refused_approver(org, "OnlyAdminEditsOthers", per_person=True)


async def test_legacy_time_entry_follows_the_same_rights(org: Org) -> None:
    bob, _mia, pam, eve, _record = await team(org)
    await set_stages(org, [{"type": "pm"}])
    submit_id = (await submit(bob, bob))["id"]
    await reject(pam, submit_id, 0, "Wednesday is missing")
    entry = {"start": "2026-03-04 09:00:00", "duration": 3600, "person": {"id": bob.id}}
    created = await (await legacy_for(org, pam)).ok("time_entry.create", time_entry=entry)
    assert (await duration_of(org, created["id"])) == HOUR_MS
    refused = await (await legacy_for(org, eve)).error("time_entry.create", time_entry=entry)
    assert refused.startswith("Permission denied")
    assert (await state(org.admin, bob))["status"] == "r"


async def test_an_outsider_with_an_out_of_range_time_is_refused_not_crashed(org: Org) -> None:
    bob, _mia, _pam, eve, _record = await team(org)
    for start in (2**63, -(2**63) - 1, 10**20):
        # Refused before any rule runs: the timestamp is outside what the service accepts.
        message = await eve.gql.error(ADD, {"s": start, "p": bob.id})
        assert "$s" in message and "3000-01-01" in message, (start, message)
