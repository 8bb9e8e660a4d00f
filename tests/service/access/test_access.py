"""Access (assignments) through POST /graphql: the account's switches, the "Who has access?"
lists of projects, subprojects, absence and expense types, expense types limited to projects,
getAvailableSubProjects and getAvailableAbsenceTypes; admin only, audited, bad input named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from graphql import parse, print_ast

from tests.service.access_support import (
    absence_type,
    expense_type,
    link,
    link_mutation,
    project,
    switch,
    tag,
    tag_person,
)
from tests.service.spec_tables import REFERENCE
from tests.support import Org

ALL_ON = {
    "projects": True, "subProjects": True, "tasks": True, "absenceTypes": True,
    "expenseTypes": True, "customFields": True, "scheduleTypes": True,
}
SWITCH_NAMES = {
    "Project": "projects", "SubProject": "subProjects", "Task": "tasks",
    "AbsenceType": "absenceTypes", "ExpenseType": "expenseTypes",
    "CustomField": "customFields", "ScheduleType": "scheduleTypes",
}
AVAILABLE_ABSENCES = """query($p: SvcId!) { getAvailableAbsenceTypes(personId: $p) { name } }"""
AVAILABLE_SUBS = """query($pr: SvcId!, $p: SvcId!) {
  getAvailableSubProjects(projectId: $pr, personId: $p) { name } }"""
TRAILS = """query($o: [String]) { getAuditTrails(operations: $o) {
  operationName arguments { name value } } }"""


async def trail_names(org: Org, *operations: str) -> list[str]:
    data = await org.admin.gql(TRAILS, {"o": list(operations)})
    return [entry["operationName"] for entry in data["getAuditTrails"]]


async def test_switches_are_on_by_default_and_each_turns_off_alone(org: Org) -> None:
    data = await org.admin.gql("{ currentOrganisation { availability { projects tasks "
                               "subProjects absenceTypes expenseTypes customFields "
                               "scheduleTypes } } }")
    assert data["currentOrganisation"]["availability"] == ALL_ON
    for what, name in SWITCH_NAMES.items():
        assert await switch(org, what, False) == {**ALL_ON, name: False}
        assert await switch(org, what, True) == ALL_ON
    operations = [f"editOrganisation{what}Availability" for what in SWITCH_NAMES]
    assert sorted(await trail_names(org, *operations)) == sorted(operations * 2)


async def test_only_an_admin_edits_access(org: Org) -> None:
    erin = await org.add_member("Erin")
    manager = await org.add_member("Mona", role="manager")
    apollo = await project(org, "Apollo")
    for member in (erin, manager):
        assert await member.gql.denied(
            "mutation { editOrganisationProjectAvailability(available: false) { id } }"
        ) == ["Mutation.editOrganisationProjectAvailability"]
        assert await member.gql.denied(
            link_mutation("assignProjectToPerson", "personId", "projectId"),
            {"m": member.id, "i": apollo},
        ) == ["Mutation.assignProjectToPerson"]
    data = await org.admin.gql("{ currentOrganisation { availability { projects } } }")
    assert data["currentOrganisation"]["availability"]["projects"] is True
    assert await trail_names(org, "assignProjectToPerson") == []


LINKS = [
    # (assign, unassign, member argument, item argument, source key, target key)
    ("assignProjectToPerson", "unassignProjectFromPerson", "personId", "projectId",
     "projects", "projectsOfPerson"),
    ("assignProjectToTag", "unassignProjectFromTag", "tagId", "projectId",
     "projects", "projectsOfTag"),
    ("assignSubProjectToPerson", "unassignSubProjectFromPerson", "personId", "subProjectId",
     "subProjects", "subProjectsOfPerson"),
    ("assignSubProjectToTag", "unassignSubProjectFromTag", "tagId", "subProjectId",
     "subProjects", "subProjectsOfTag"),
    ("assignAbsenceTypeToPerson", "unassignAbsenceTypeFromPerson", "personId", "absenceTypeId",
     "absenceTypes", "absenceTypesOfPerson"),
    ("assignAbsenceTypeToTag", "unassignAbsenceTypeFromTag", "tagId", "absenceTypeId",
     "absenceTypes", "absenceTypesOfTag"),
    ("assignExpenseTypeToPerson", "unassignExpenseTypeFromPerson", "personId", "expenseTypeId",
     "expenseTypes", "expenseTypesOfPerson"),
    ("assignExpenseTypeToTag", "unassignExpenseTypeFromTag", "tagId", "expenseTypeId",
     "expenseTypes", "expenseTypesOfTag"),
    ("assignExpenseTypeToProject", "unassignExpenseTypeFromProject", "projectId",
     "expenseTypeId", "expenseTypes", "expenseTypesOfProject"),
]


async def _ids(org: Org, member_argument: str, item_argument: str) -> tuple[str, str]:
    if member_argument == "personId":
        member = (await org.add_member("Erin")).id
    elif member_argument == "tagId":
        member = await tag(org, "Backend")
    else:
        member = await project(org, "Apollo")
    if item_argument == "projectId":
        item = await project(org, "Hermes")
    elif item_argument == "subProjectId":
        item = await project(org, "Docs", await project(org, "Hermes"))
    elif item_argument == "absenceTypeId":
        item = await absence_type(org, "Vacation")
    else:
        item = await expense_type(org, "Travel")
    return member, item


@pytest.mark.parametrize("case", LINKS, ids=[case[0] for case in LINKS])
async def test_assign_and_unassign(org: Org, case: tuple[str, ...]) -> None:
    assign, unassign, member_argument, item_argument, source_key, target_key = case
    member, item = await _ids(org, member_argument, item_argument)
    first = await link(org, assign, member_argument, member, item_argument, item)
    assert first["sourceId"] == member and first["targetId"] == item
    assert (first["sourceKey"], first["targetKey"]) == (source_key, target_key)
    assert first["signature"] == f"{member}.{source_key}-{item}.{target_key}"
    # A retry stores nothing twice: the same link comes back.
    assert await link(org, assign, member_argument, member, item_argument, item) == first
    assert await link(org, unassign, member_argument, member, item_argument, item) == first
    message = await org.admin.gql.error(
        link_mutation(unassign, member_argument, item_argument), {"m": member, "i": item}
    )
    assert message.startswith(f'Invalid argument "{member_argument}"'), message
    assert "is not assigned to the" in message
    # Unknown ids are named by argument.
    for name, variables in ((member_argument, {"m": "f" * 24, "i": item}),
                            (item_argument, {"m": member, "i": "f" * 24})):
        message = await org.admin.gql.error(
            link_mutation(assign, member_argument, item_argument), variables
        )
        assert f'"{name}"' in message, message
    assert sorted(await trail_names(org, assign, unassign)) == [assign, assign, unassign]


async def test_a_subproject_mutation_names_a_top_level_project(org: Org) -> None:
    erin = await org.add_member("Erin")
    apollo = await project(org, "Apollo")
    message = await org.admin.gql.error(
        link_mutation("assignSubProjectToPerson", "personId", "subProjectId"),
        {"m": erin.id, "i": apollo},
    )
    assert message == 'Invalid argument "subProjectId": the project Apollo is not a subproject'


async def test_an_archived_person_is_not_assigned(org: Org) -> None:
    erin = await org.add_member("Erin")
    vacation = await absence_type(org, "Vacation")
    await org.admin.gql("mutation($id: SvcId!) { archivePerson(id: $id) { id } }", {"id": erin.id})
    message = await org.admin.gql.error(
        link_mutation("assignAbsenceTypeToPerson", "personId", "absenceTypeId"),
        {"m": erin.id, "i": vacation},
    )
    assert message == 'Invalid argument "personId": Erin is archived'


async def names(member_gql: Any, query: str, variables: dict[str, Any], field: str) -> list[str]:
    data = await member_gql(query, variables)
    return [row["name"] for row in data[field]]


async def test_available_absence_types_follow_the_lists_and_the_default(org: Org) -> None:
    erin = await org.add_member("Erin")
    frank = await org.add_member("Frank")
    engineering = await tag(org, "Engineering")
    backend = await tag(org, "Backend", engineering)
    await tag_person(org, backend, erin.id)
    vacation = await absence_type(org, "Vacation")
    sick = await absence_type(org, "Sick leave")
    parental = await absence_type(org, "Parental leave")
    await link(org, "assignAbsenceTypeToPerson", "personId", frank.id, "absenceTypeId", sick)
    # A tag on the list includes its descendants: Erin carries Backend, child of Engineering.
    await link(org, "assignAbsenceTypeToTag", "tagId", engineering, "absenceTypeId", parental)

    async def available(member: Any) -> list[str]:
        return await names(member.gql, AVAILABLE_ABSENCES, {"p": member.id},
                           "getAvailableAbsenceTypes")

    # Shown by default: the lists exclude.
    assert await available(erin) == ["Sick leave", "Vacation"]
    assert await available(frank) == ["Parental leave", "Vacation"]
    await switch(org, "AbsenceType", False)
    # Hidden by default: the lists grant.
    assert await available(erin) == ["Parental leave"]
    assert await available(frank) == ["Sick leave"]
    assert vacation
    # The admin may ask for anyone; an employee only for themselves.
    assert await names(org.admin.gql, AVAILABLE_ABSENCES, {"p": erin.id},
                       "getAvailableAbsenceTypes") == ["Parental leave"]
    assert await frank.gql.denied(AVAILABLE_ABSENCES, {"p": erin.id}) == [
        "Query.getAvailableAbsenceTypes"
    ]
    assert 'Invalid argument "personId"' in await org.admin.gql.error(
        AVAILABLE_ABSENCES, {"p": "f" * 24}
    )


async def test_available_subprojects_inherit_and_follow_overrides(org: Org) -> None:
    erin = await org.add_member("Erin")
    apollo = await project(org, "Apollo")
    docs = await project(org, "Docs", apollo)
    api = await project(org, "API", apollo)
    await project(org, "Guides", docs)

    async def available() -> list[str]:
        return await names(erin.gql, AVAILABLE_SUBS, {"pr": apollo, "p": erin.id},
                           "getAvailableSubProjects")

    assert await available() == ["API", "Docs", "Guides"]
    # Excluded from API (shown by default): gone; Guides inherits Docs.
    await link(org, "assignSubProjectToPerson", "personId", erin.id, "subProjectId", api)
    assert await available() == ["Docs", "Guides"]
    # Projects hidden by default: Erin has Apollo by her own line; the subprojects inherit.
    await switch(org, "Project", False)
    assert await available() == []
    await link(org, "assignProjectToPerson", "personId", erin.id, "projectId", apollo)
    assert await available() == ["Docs", "Guides"]
    # Unavailable to everyone: the override wins over the list, and is inherited.
    await org.admin.gql("mutation($id: SvcId!) { editProjectAvailability(id: $id, "
                        "availability: false) { id } }", {"id": docs})
    assert await available() == []
    assert 'Invalid argument "projectId"' in await org.admin.gql.error(
        AVAILABLE_SUBS, {"pr": "f" * 24, "p": erin.id}
    )


async def test_a_non_admin_lists_only_the_projects_they_may_use_or_manage(org: Org) -> None:
    erin = await org.add_member("Erin")
    mona = await org.add_member("Mona", role="manager")
    apollo = await project(org, "Apollo")
    hermes = await project(org, "Hermes")
    await project(org, "Docs", apollo)
    listing = "{ getProjects { name } countProjects filterProjectIds }"

    async def listed(gql: Any) -> list[str]:
        data = await gql(listing)
        assert data["countProjects"] == len(data["filterProjectIds"]) == len(data["getProjects"])
        return [p["name"] for p in data["getProjects"]]

    assert await listed(erin.gql) == ["Apollo", "Docs", "Hermes"]
    await switch(org, "Project", False)
    assert await listed(erin.gql) == []
    await link(org, "assignProjectToPerson", "personId", erin.id, "projectId", apollo)
    assert await listed(erin.gql) == ["Apollo", "Docs"]
    await org.admin.gql("mutation($m: SvcId!, $p: SvcId!) { makeManagerOfProject(managerId: $m, "
                        "projectId: $p) { id } }", {"m": mona.id, "p": hermes})
    assert await listed(mona.gql) == ["Hermes"]
    assert await listed(org.admin.gql) == ["Apollo", "Docs", "Hermes"]


ACCESS_OPERATIONS = [*(f"editOrganisation{what}Availability" for what in SWITCH_NAMES),
                     *(name for case in LINKS for name in case[:2]),
                     "getAvailableSubProjects", "getAvailableAbsenceTypes"]


def _signature(field: Any) -> tuple[tuple[tuple[str, str], ...], str]:
    args = tuple((arg.name.value, print_ast(arg.type)) for arg in field.arguments or [])
    return args, print_ast(field.type)


@pytest.mark.skipif(not REFERENCE.exists(), reason="the reference schema is not beside us")
def test_the_operations_have_the_reference_signatures() -> None:
    def fields(text: str) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for definition in parse(text).definitions:
            name = getattr(getattr(definition, "name", None), "value", None)
            if name in ("Query", "Mutation"):
                found.update({f.name.value: f for f in getattr(definition, "fields", [])})
        return found

    reference = fields(REFERENCE.read_text())
    ours = fields((Path(__file__).parents[3] / "service" / "access" / "access.graphql").read_text())
    for name in ACCESS_OPERATIONS:
        assert _signature(ours[name]) == _signature(reference[name]), name
