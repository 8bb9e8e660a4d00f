"""Edit rights by status (the specification's table), the two settings, approver edits
restarting the workflow and admin edits never doing so; every refusal names its reason."""

from __future__ import annotations

from typing import Any

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
from tests.support import HOUR_MS, Member, Org

ADD = (
    "mutation($s: SvcTimestamp!, $p: SvcId!) { addTimeRecord(startTime: $s, duration: 3600000,"
    " personId: $p) { id } }"
)
DURATION = (
    "mutation($id: SvcId!, $d: Int!) { editTimeRecordDuration(id: $id, duration: $d) { id } }"
)


async def add(who: Member, owner: Member) -> Any:
    return await who.gql(ADD, {"s": WEEK + 10 * HOUR_MS, "p": owner.id})


async def refused(who: Member, owner: Member) -> str:
    return await who.gql.error(ADD, {"s": WEEK + 10 * HOUR_MS, "p": owner.id})


async def setting(org: Org, name: str, value: bool, person: Member | None = None) -> None:
    if person is None:
        await org.admin.gql(f"mutation {{ editOrganisationTimeSettings{name}("
                            f"{name[0].lower() + name[1:]}: {str(value).lower()}) {{ id }} }}")
    else:
        await org.admin.gql(
            f"mutation($id: SvcId!) {{ editPersonTimeSettings{name}(id: $id, "
            f"{name[0].lower() + name[1:]}: {str(value).lower()}) {{ id }} }}", {"id": person.id},
        )


async def test_edit_rights_by_status(org: Org) -> None:
    bob = await org.add_member("Bob")
    pam = await org.add_member("Pam", role="manager")
    mia = await org.add_member("Mia", role="manager")
    max_ = await org.add_member("Max", role="manager")
    await manage(org, mia, bob)
    await manage(org, max_, bob)
    apollo = await add_project(org, "Apollo", managers=(pam,))
    await set_stages(org, [{"type": "pm"}, {"type": "ppm"}])
    record = await add_record(bob, bob, projects=(apollo,))

    # Draft: owner and admin.
    await add(bob, bob)
    await add(org.admin, bob)
    assert "is a draft: only its owner or an administrator may edit it" in await refused(mia, bob)

    submit_id = (await submit(bob, bob))["id"]
    # Submitted: owner locked, admin may, current-stage approver may (restart), others not.
    assert "submitted for approval and locked for its owner" in await refused(bob, bob)
    assert "locked for its owner" in await bob.gql.error(
        DURATION, {"id": record, "d": HOUR_MS}
    )
    await approve(pam, submit_id)
    assert (await state(bob, bob))["currentStage"] == 1
    await add(org.admin, bob)  # admin edits never restart the workflow
    assert (await state(bob, bob))["currentStage"] == 1
    await mia.gql(DURATION, {"id": record, "d": 3 * HOUR_MS})  # Mia is a stage-1 approver
    restarted = await state(bob, bob)
    assert restarted["currentStage"] == 0 and pending_ids(restarted) == {pam.id}
    events = await org.admin.gql(
        "query($p: SvcId!) { getPersonApprovalEvents(personId: $p) { systemAction by { id } } }",
        {"p": bob.id},
    )
    restarts = [e for e in events["getPersonApprovalEvents"]
                if e["systemAction"] == "restartAfterApproverEdit"]
    assert [e["by"]["id"] for e in restarts] == [mia.id]
    # Mia is not an approver of the current stage any more.
    message = await refused(mia, bob)
    assert "only an approver of its current stage (stage 0: Project managers)" in message

    await approve(pam, submit_id)
    await approve(mia, submit_id)
    # Approved: only an admin.
    assert "approved and locked for its owner" in await refused(bob, bob)
    assert "is approved: only an administrator may edit it" in await refused(mia, bob)
    await add(org.admin, bob)
    assert (await state(bob, bob))["status"] == "a"

    # Rejected: owner, the rejecting approver (in place), admin; not another approver.
    await reject(mia, submit_id, 1, "fix Apollo")
    await add(bob, bob)
    await add(mia, bob)
    assert (await state(bob, bob))["status"] == "r"
    message = await refused(max_, bob)
    assert "only its owner, the approver who rejected it or an administrator" in message
    await add(org.admin, bob)


async def test_owner_or_admin_only_setting_removes_approver_editing(org: Org) -> None:
    bob = await org.add_member("Bob")
    mia = await org.add_member("Mia", role="manager")
    await manage(org, mia, bob)
    await set_stages(org, [{"type": "ppm"}])
    await add_record(bob, bob)
    await setting(org, "OwnerOrAdminOnly", True)
    submit_id = (await submit(bob, bob))["id"]
    message = await refused(mia, bob)
    assert 'only the owner or an admin can edit entries (setting "Only the owner' in message
    await add(org.admin, bob)
    await reject(mia, submit_id, 0, "please fix")
    assert "only the owner or an admin can edit entries" in await refused(mia, bob)
    await add(bob, bob)
    settings = await org.admin.gql(
        "{ currentOrganisation { timeSettings { ownerOrAdminOnly { value path { collection } }"
        " onlyAdminEditsOthers { value } approvalReminder { value } } } }"
    )
    assert settings["currentOrganisation"]["timeSettings"] == {
        "ownerOrAdminOnly": {"value": True, "path": [{"collection": "organisations"}]},
        "onlyAdminEditsOthers": {"value": None},
        "approvalReminder": {"value": None},
    }


async def test_only_admin_edits_others_setting(org: Org) -> None:
    bob = await org.add_member("Bob")
    mia = await org.add_member("Mia", role="manager")
    await manage(org, mia, bob)
    await set_stages(org, [{"type": "ppm"}])
    await add_record(bob, bob)
    await setting(org, "OnlyAdminEditsOthers", True, person=bob)
    submit_id = (await submit(bob, bob))["id"]
    message = await refused(mia, bob)
    assert "only an administrator can edit someone else's timesheet" in message
    await reject(mia, submit_id, 0, "please fix")
    assert "only an administrator can edit someone else's timesheet" in await refused(mia, bob)
    await add(org.admin, bob)
    await add(bob, bob)
    # The setting is the admin's to change.
    denied = await mia.gql.denied(
        "mutation { editOrganisationTimeSettingsOnlyAdminEditsOthers(onlyAdminEditsOthers: "
        "false) { id } }"
    )
    assert denied == ["Mutation.editOrganisationTimeSettingsOnlyAdminEditsOthers"]
    person = await org.admin.gql(
        "query($id: SvcId!) { getPerson(id: $id) { timeSettings { onlyAdminEditsOthers { value "
        "path { id collection } } } } }", {"id": bob.id},
    )
    assert person["getPerson"]["timeSettings"]["onlyAdminEditsOthers"] == {
        "value": True, "path": [{"id": bob.id, "collection": "persons"}]
    }
