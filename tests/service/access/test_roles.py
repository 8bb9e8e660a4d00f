"""Roles and the permission catalogue over POST /graphql, on SQLite and PostgreSQL: the role
operations (administrators only), deleteRole's refusal, and custom roles refused exactly what
a missing permission governs (people, projects, rates, approvals, tags, reports, audit)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from plumbing.db import unit_of_work
from service.access.permissions import CATALOGUE
from service.models import AuditTrail
from tests.support import Member, Org

ROLE = "id name archived color authorisations { name view manage } persons { id }"
ADD_ROLE = ("mutation($n: SvcName!, $a: [SvcAuthorisationInput]!, $c: SvcColor) { "
            f"addRole(name: $n, authorisations: $a, color: $c) {{ {ROLE} }} }}")
EDIT_AUTH = ("mutation($id: SvcId!, $a: [SvcAuthorisationInput]!) { "
             f"editRoleAuthorisations(id: $id, authorisations: $a) {{ {ROLE} }} }}")
SET_ROLE = "mutation($id: SvcId!, $r: SvcId!) { editPersonRole(id: $id, roleId: $r) { id } }"
ADD_PERSON = ("mutation($n: SvcName!, $e: SvcEmail!, $r: SvcId!) { "
              "addPerson(name: $n, email: $e, roleId: $r) { id } }")
ADD_PROJECT = 'mutation { addProject(name: "Apollo") { id } }'
ADD_TAG = 'mutation { addTag(name: "Crew") { id } }'
ADD_RATE = ('mutation { addOrganisationBilling(startTime: 1767225600000, amount: '
            '{value: 100, currency: "EUR"}, method: hourly) { id } }')
STAGES = "mutation { editOrganisationApprovalStages(stages: []) { id } }"
REPORT = ("query($p: SvcReportParamPeriodInput) { runInlineReport(records: [time], "
          "period: $p) { pending } }")


async def _role_ids(org: Org) -> dict[str, str]:
    data = await org.admin.gql("{ getRoles { id name } }")
    return {r["name"]: r["id"] for r in data["getRoles"]}


async def _custom(org: Org, name: str, grants: list[dict[str, Any]]) -> tuple[str, Member]:
    role = (await org.admin.gql(ADD_ROLE, {"n": f"{name} role", "a": grants}))["addRole"]
    member = await org.add_member(name)
    await org.admin.gql(SET_ROLE, {"id": member.id, "r": role["id"]})
    return role["id"], member


async def test_role_operations_and_their_audit(org: Org) -> None:
    added = (await org.admin.gql(ADD_ROLE, {
        "n": "Accountant", "c": "#00ff00",
        "a": [{"name": "billingRates", "view": ["all"]}, {"name": "reports", "view": ["all"]}],
    }))["addRole"]
    assert added["name"] == "Accountant" and added["color"] == "#00ff00"
    assert added["authorisations"] == [
        {"name": "billingRates", "view": ["all"], "manage": []},
        {"name": "reports", "view": ["all"], "manage": []}]
    rid = added["id"]
    got = (await org.admin.gql(f'{{ getRole(id: "{rid}") {{ {ROLE} }} }}'))["getRole"]
    assert got == added
    assert (await org.admin.gql("{ countRoles }"))["countRoles"] == 4
    renamed = await org.admin.gql(
        f'mutation {{ editRoleName(id: "{rid}", name: "Accounts") {{ name }} }}')
    assert renamed["editRoleName"]["name"] == "Accounts"
    recolored = await org.admin.gql(
        f'mutation {{ editRoleColor(id: "{rid}", color: null) {{ color }} }}')
    assert recolored["editRoleColor"]["color"] is None
    copy = (await org.admin.gql(
        f'mutation {{ duplicateRole(id: "{rid}", name: "Accounts 2") {{ {ROLE} }} }}'
    ))["duplicateRole"]
    assert copy["id"] != rid and copy["authorisations"] == added["authorisations"]
    archived = await org.admin.gql(
        f'mutation {{ archiveRoles(ids: ["{rid}", "{copy["id"]}"]) {{ archived }} }}')
    assert [r["archived"] for r in archived["archiveRoles"]] == [True, True]
    assert (await org.admin.gql("{ countRoles }"))["countRoles"] == 3
    assert (await org.admin.gql("{ countRoles(archived: true) }"))["countRoles"] == 5
    filtered = await org.admin.gql(
        '{ getRoles(filter: [{name: "accounts 2"}], archived: true) { id } }')
    assert filtered["getRoles"] == [{"id": copy["id"]}]
    # An archived role is given to nobody.
    message = await org.admin.gql.error(ADD_PERSON, {"n": "Al", "e": "al@example.com", "r": rid})
    assert message.startswith('Invalid argument "roleId"')
    back = await org.admin.gql(f'mutation {{ unarchiveRole(id: "{rid}") {{ archived }} }}')
    assert back["unarchiveRole"]["archived"] is False
    await org.admin.gql(f'mutation {{ unarchiveRoles(ids: ["{copy["id"]}"]) {{ id }} }}')
    await org.admin.gql(f'mutation {{ archiveRole(id: "{copy["id"]}") {{ id }} }}')
    # Refused while people hold it, naming how many.
    for name in ("Al", "Bo"):
        await org.admin.gql(ADD_PERSON, {"n": name, "e": f"{name}@example.com", "r": rid})
    message = await org.admin.gql.error(f'mutation {{ deleteRole(id: "{rid}") {{ id }} }}')
    assert "cannot be deleted: 2 people hold it" in message
    deleted = await org.admin.gql(f'mutation {{ deleteRole(id: "{copy["id"]}") {{ id }} }}')
    assert deleted["deleteRole"]["id"] == copy["id"]
    assert (await org.admin.gql.error(f'{{ getRole(id: "{copy["id"]}") {{ id }} }}')).startswith(
        'Invalid argument "id"')
    async with unit_of_work(org.live.service.sessions) as session:
        operations = set(await session.scalars(select(AuditTrail.operation_name).where(
            AuditTrail.organisation_id == org.id)))
    assert {"addRole", "editRoleName", "editRoleColor", "duplicateRole", "archiveRoles",
            "unarchiveRole", "unarchiveRoles", "archiveRole", "deleteRole"} <= operations


async def test_built_in_roles_stay(org: Org) -> None:
    roles = await _role_ids(org)
    for name in ("Admin", "Manager", "Employee"):
        message = await org.admin.gql.error(
            f'mutation {{ archiveRole(id: "{roles[name]}") {{ id }} }}')
        assert "only active" in message
    message = await org.admin.gql.error(
        f'mutation {{ deleteRole(id: "{roles["Admin"]}") {{ id }} }}')
    assert "1 person holds it" in message


async def test_only_administrators_edit_roles(org: Org) -> None:
    roles = await _role_ids(org)
    manager = await org.add_member("Max", "manager")
    employee = await org.add_member("Eve")
    _rid, people = await _custom(org, "Pat", [{"name": "people", "manage": ["all"]}])
    rid = roles["Employee"]
    for who in (manager, employee, people):
        for operation in (
            ADD_ROLE.replace("$c: SvcColor", "$c: SvcColor = null"),
            f'mutation {{ duplicateRole(id: "{rid}", name: "X") {{ id }} }}',
            f'mutation {{ editRoleName(id: "{rid}", name: "X") {{ id }} }}',
            f'mutation {{ editRoleColor(id: "{rid}", color: "#000000") {{ id }} }}',
            f'mutation {{ archiveRole(id: "{rid}") {{ id }} }}',
            f'mutation {{ deleteRole(id: "{rid}") {{ id }} }}',
            f'mutation {{ editRoleAuthorisations(id: "{rid}", authorisations: []) {{ id }} }}',
        ):
            denied = await who.gql.denied(operation, {"n": "X", "a": []})
            assert len(denied) == 1 and denied[0].startswith("Mutation.")
    # Everyone reads them.
    assert (await employee.gql("{ countRoles }"))["countRoles"] == 4


async def test_the_catalogue(org: Org) -> None:
    admin = (await org.admin.gql("{ getGlobalAuthorisations { name targets view manage } }"))
    names = [a["name"] for a in admin["getGlobalAuthorisations"]]
    assert names == [p.name for p in CATALOGUE]
    assert {"billingRates", "approvals", "people", "projects", "tasks", "tags", "expenses",
            "reports", "settings", "audit"} == set(names)
    assert all(a["manage"] == ["all"] for a in admin["getGlobalAuthorisations"])
    employee = await org.add_member("Eve")
    mine = (await employee.gql("{ getGlobalAuthorisations { name view manage } }"))
    granted = {a["name"]: (a["view"], a["manage"]) for a in mine["getGlobalAuthorisations"]}
    assert granted["reports"] == (["all"], []) and granted["people"] == ([], [])
    rid = (await _role_ids(org))["Employee"]
    for bad, argument in (([{"name": "root"}], "authorisations[0].name"),
                          ([{"name": "tags", "manage": ["some"]}], "authorisations[0].manage[0]"),
                          ([{"name": "tags"}, {"name": "tags"}], "authorisations[1].name")):
        message = await org.admin.gql.error(EDIT_AUTH, {"id": rid, "a": bad})
        assert message.startswith(f'Invalid argument "{argument}"'), message


async def test_a_custom_role_is_refused_what_it_lacks(org: Org) -> None:
    _rid, bare = await _custom(org, "Nil", [])
    period = {"target": "custom", "start": 1767225600000, "end": 1767312000000}
    assert await bare.gql.denied(ADD_PROJECT) == ["Mutation.addProject"]
    assert await bare.gql.denied(ADD_TAG) == ["Mutation.addTag"]
    assert await bare.gql.denied(ADD_RATE) == ["Mutation.addOrganisationBilling"]
    assert await bare.gql.denied(STAGES) == ["Mutation.editOrganisationApprovalStages"]
    employee_role = (await _role_ids(org))["Employee"]
    variables = {"n": "Al", "e": "al@example.com", "r": employee_role}
    assert await bare.gql.denied(ADD_PERSON, variables) == ["Mutation.addPerson"]
    assert await bare.gql.denied(REPORT, {"p": period}) == ["Query.runInlineReport"]
    # The built-in employee keeps today's rights: reports yes, structure no.
    employee = await org.add_member("Eve")
    assert (await employee.gql(REPORT, {"p": period}))["runInlineReport"] is not None
    assert await employee.gql.denied(ADD_PROJECT) == ["Mutation.addProject"]


async def test_granted_permissions_open_exactly_their_operations(org: Org) -> None:
    roles = await _role_ids(org)
    rid, pat = await _custom(org, "Pat", [{"name": "people", "manage": ["all"]}])
    added = await pat.gql(ADD_PERSON, {"n": "Al", "e": "al@example.com", "r": roles["Employee"]})
    al = added["addPerson"]["id"]
    await pat.gql(f'mutation {{ editPersonName(id: "{al}", name: "Alan") {{ id }} }}')
    assert await pat.gql.denied(ADD_PROJECT) == ["Mutation.addProject"]
    # The people permission is not the administrators': it gives no admin role, edits no admin.
    assert await pat.gql.denied(SET_ROLE, {"id": al, "r": roles["Admin"]}) == [
        "Mutation.editPersonRole"]
    assert await pat.gql.denied(
        f'mutation {{ editPersonEmail(id: "{org.admin.id}", email: "x@example.com") {{ id }} }}'
    ) == ["Mutation.editPersonEmail"]
    assert await pat.gql.denied(
        f'mutation {{ archivePersons(ids: ["{org.admin.id}"]) {{ id }} }}'
    ) == ["Mutation.archivePersons"]
    # Projects, rates and approvals granted: each opens its own operations only.
    await org.admin.gql(EDIT_AUTH, {"id": rid, "a": [
        {"name": "projects", "manage": ["all"]}, {"name": "billingRates", "manage": ["all"]},
        {"name": "approvals", "manage": ["all"]}]})
    assert (await pat.gql(ADD_PROJECT))["addProject"]["id"]
    assert (await pat.gql(ADD_RATE))["addOrganisationBilling"]["id"]
    assert (await pat.gql(STAGES))["editOrganisationApprovalStages"]["id"]
    assert await pat.gql.denied(ADD_TAG) == ["Mutation.addTag"]
    assert await pat.gql.denied(
        ADD_PERSON, {"n": "Bo", "e": "bo@example.com", "r": roles["Employee"]}
    ) == ["Mutation.addPerson"]  # people was replaced, not kept
    # The audit trail: one's own without the audit permission, everyone's with it.
    trail = "{ getAuditTrails { person { id } } }"
    seen = {t["person"]["id"] for t in (await pat.gql(trail))["getAuditTrails"]}
    assert seen == {pat.id}
    await org.admin.gql(EDIT_AUTH, {"id": rid, "a": [{"name": "audit", "view": ["all"]}]})
    seen = {t["person"]["id"] for t in (await pat.gql(trail))["getAuditTrails"]}
    assert org.admin.id in seen


async def test_access_lists_follow_the_items_permission(org: Org) -> None:
    """Who has access to an expense type is the expenses permission's; to a project, the
    projects permission's."""
    _rid, clerk = await _custom(org, "Cy", [{"name": "expenses", "manage": ["all"]}])
    expense_type = (await org.admin.gql('mutation { addExpenseType(name: "Taxi") { id } }'))[
        "addExpenseType"]["id"]
    project = (await org.admin.gql(ADD_PROJECT))["addProject"]["id"]
    assign_type = ("mutation($p: SvcId!, $t: SvcId!) { assignExpenseTypeToPerson(personId: $p, "
                   "expenseTypeId: $t) { signature } }")
    assign_project = ("mutation($p: SvcId!, $t: SvcId!) { assignProjectToPerson(personId: $p, "
                      "projectId: $t) { signature } }")
    done = await clerk.gql(assign_type, {"p": clerk.id, "t": expense_type})
    assert done["assignExpenseTypeToPerson"]["signature"]
    assert await clerk.gql.denied(assign_project, {"p": clerk.id, "t": project}) == [
        "Mutation.assignProjectToPerson"]
    assert (await org.admin.gql(assign_project, {"p": clerk.id, "t": project}))
