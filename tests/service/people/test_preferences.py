"""A person's screen, task and journal settings and the organisation's onboarding over POST
/graphql: who edits and reads them, bad input named, the audit trail; and moving an allowance
to another absence type (editAbsenceQuotaAbsence)."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from plumbing.db import unit_of_work
from service.models import AuditTrail
from tests.support import Org

UNKNOWN = "0123456789abcdef01234567"
JAN_1 = 1_767_225_600_000
NEXT_JAN_1 = 1_798_761_600_000


async def audited(org: Org, operation: str) -> int:
    async with unit_of_work(org.live.service.sessions) as session:
        return int(await session.scalar(select(func.count()).select_from(AuditTrail).where(
            AuditTrail.organisation_id == org.id, AuditTrail.operation_name == operation)) or 0)


@pytest.mark.parametrize("part", ["Screen", "Task", "Journal"])
async def test_person_settings(org: Org, part: str) -> None:
    field = f"{part.lower()}Settings"
    operation = f"editPerson{part}Settings"
    edit = (f"mutation($id: SvcId!, $s: String) {{ {operation}(id: $id, settings: $s) "
            f"{{ id {field} }} }}")
    read = f"query($id: SvcId!) {{ getPerson(id: $id) {{ id {field} }} }}"
    bob = await org.add_member("Bob")
    eve = await org.add_member("Eve")
    mine = '{"columns": ["name", "hours"]}'
    assert (await bob.gql(edit, {"id": bob.id, "s": mine}))[operation][field] == mine
    assert (await bob.gql(read, {"id": bob.id}))["getPerson"][field] == mine
    assert (await org.admin.gql(read, {"id": bob.id}))["getPerson"][field] == mine
    # Another person neither edits nor reads them; an administrator does both.
    assert await eve.gql.denied(edit, {"id": bob.id, "s": "{}"}) == [f"Mutation.{operation}"]
    assert (await org.admin.gql(edit, {"id": bob.id, "s": None}))[operation][field] is None
    assert await audited(org, operation) == 2
    message = await bob.gql.error(edit, {"id": bob.id, "s": "x" * 17_000})
    assert 'Invalid argument "settings"' in message and "at most 16384" in message
    assert 'Invalid argument "id"' in await org.admin.gql.error(edit, {"id": UNKNOWN, "s": ""})


ONBOARDING = "isOnboard lastStep features tool role size channel requestedDemo personId"
EDIT_ONBOARDING = (f"mutation($o: SvcInputOnboarding) {{ editOrganisationOnboarding("
                   f"onboarding: $o) {{ id onboarding {{ {ONBOARDING} }} }} }}")


async def test_onboarding(org: Org) -> None:
    fresh = await org.admin.gql("{ currentOrganisation { onboarding { isOnboard } } }")
    assert fresh["currentOrganisation"]["onboarding"] is None
    first = await org.admin.gql(EDIT_ONBOARDING, {"o": {
        "lastStep": "projects", "features": ["approvals", "reports"], "size": "11-50",
        "personId": org.admin.id}})
    assert first["editOrganisationOnboarding"]["onboarding"] == {
        "isOnboard": None, "lastStep": "projects", "features": ["approvals", "reports"],
        "tool": None, "role": None, "size": "11-50", "channel": None, "requestedDemo": None,
        "personId": org.admin.id}
    # The fields given replace the stored ones; the others stay.
    second = await org.admin.gql(EDIT_ONBOARDING, {"o": {"isOnboard": True,
                                                         "lastStep": "done"}})
    read = second["editOrganisationOnboarding"]["onboarding"]
    assert read["isOnboard"] is True and read["lastStep"] == "done" and read["size"] == "11-50"
    eve = await org.add_member("Eve")
    seen = await eve.gql("{ currentOrganisation { onboarding { isOnboard } } }")
    assert seen["currentOrganisation"]["onboarding"] == {"isOnboard": True}
    assert await eve.gql.denied(EDIT_ONBOARDING, {"o": {"isOnboard": False}}) == [
        "Mutation.editOrganisationOnboarding"]
    message = await org.admin.gql.error(EDIT_ONBOARDING, {"o": {"personId": UNKNOWN}})
    assert 'Invalid argument "onboarding.personId"' in message
    message = await org.admin.gql.error(EDIT_ONBOARDING, {"o": {"tool": "t" * 300}})
    assert 'Invalid argument "onboarding.tool"' in message
    assert await audited(org, "editOrganisationOnboarding") == 2
    cleared = await org.admin.gql(EDIT_ONBOARDING, {"o": None})
    assert cleared["editOrganisationOnboarding"]["onboarding"] is None


async def test_allowance_moved_to_another_absence_type(org: Org) -> None:
    async def absence(name: str) -> str:
        data = await org.admin.gql(f'mutation {{ addAbsenceType(name: "{name}") {{ id }} }}')
        return str(data["addAbsenceType"]["id"])

    vacation, leave, old = await absence("Vacation"), await absence("Leave"), await absence("Old")
    await org.admin.gql(f'mutation {{ archiveAbsenceType(id: "{old}") {{ id }} }}')
    quota = (await org.admin.gql(
        "mutation($a: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { "
        "addOrganisationAbsenceQuota(absenceId: $a, startTime: $s, endTime: $e, available: 20)"
        " { id } }", {"a": vacation, "s": JAN_1, "e": NEXT_JAN_1}))[
        "addOrganisationAbsenceQuota"]["id"]
    move = ("mutation($id: SvcId!, $a: SvcId!) { editAbsenceQuotaAbsence(id: $id, "
            "absenceId: $a) { id available absenceType { id } } }")
    moved = (await org.admin.gql(move, {"id": quota, "a": leave}))["editAbsenceQuotaAbsence"]
    assert moved == {"id": quota, "available": 20, "absenceType": {"id": leave}}
    listed = await org.admin.gql("{ currentOrganisation { absenceQuotas { value { id "
                                 "absenceType { id } } } } }")
    assert listed["currentOrganisation"]["absenceQuotas"]["value"] == [
        {"id": quota, "absenceType": {"id": leave}}]
    eve = await org.add_member("Eve")
    assert await eve.gql.denied(move, {"id": quota, "a": vacation}) == [
        "Mutation.editAbsenceQuotaAbsence"]
    assert 'Invalid argument "absenceId"' in await org.admin.gql.error(
        move, {"id": quota, "a": UNKNOWN})
    message = await org.admin.gql.error(move, {"id": quota, "a": old})
    assert 'Invalid argument "absenceId"' in message and "archived" in message
    assert 'Invalid argument "id"' in await org.admin.gql.error(
        move, {"id": UNKNOWN, "a": vacation})
    assert await audited(org, "editAbsenceQuotaAbsence") == 1
