"""Names refuse control characters (issue #23): a person named "Eve\\r\\nBcc: x@y" made the
service's mail fail to render on every poll. Through POST /graphql and the legacy interface,
on SQLite and PostgreSQL: refused with `Invalid argument "…"`, nothing written."""

from __future__ import annotations

import pytest

from tests.service.legacy.test_legacy import legacy_for
from tests.service.people.test_persons import role_ids
from tests.support import Org

HOSTILE = ["Eve\r\nBcc: x@y", "Eve\nBcc", "Eve\rX", "Eve\tTab", "Nul\x00", "Del\x7fx", "C1\x85x"]


@pytest.mark.parametrize("name", HOSTILE)
async def test_a_person_name_with_a_control_character_is_refused(org: Org, name: str) -> None:
    roles = await role_ids(org)
    error = await org.admin.gql.error(
        "mutation($n: SvcName!, $e: SvcEmail!, $r: SvcId!) {"
        " addPerson(name: $n, email: $e, roleId: $r) { id } }",
        {"n": name, "e": "eve@example.com", "r": roles["Employee"]})
    assert error.startswith('Invalid argument "name": '), error
    error = await org.admin.gql.error(
        "mutation($id: SvcId!, $n: SvcName!) { editPersonName(id: $id, name: $n) { id } }",
        {"id": org.admin.id, "n": name})
    assert error.startswith('Invalid argument "name"'), error
    people = (await org.admin.gql("{ getPersons { name email } }"))["getPersons"]
    assert [p for p in people if p["email"] == "eve@example.com"] == []
    assert all("\r" not in p["name"] and "\n" not in p["name"] for p in people)


async def test_every_kind_of_name_refuses_them_and_ordinary_names_pass(org: Org) -> None:
    bad = "Line\r\nBreak"
    for mutation in ("addProject", "addTask", "addTag", "addTagCategory", "addExpenseType",
                     "addAbsenceType"):
        error = await org.admin.gql.error(
            f"mutation($n: SvcName!) {{ {mutation}(name: $n) {{ id }} }}", {"n": bad})
        assert error.startswith('Invalid argument "name"'), (mutation, error)
    assert (await org.admin.gql("{ getProjects { id } }"))["getProjects"] == []
    error = await org.admin.gql.error(
        "mutation($n: SvcName!) { editOrganisationName(name: $n) { id } }", {"n": bad})
    assert error.startswith('Invalid argument "name"'), error
    error = await org.admin.gql.error(
        "mutation($n: String!) { addOrganisationPublicHoliday(holiday: {name: $n, date: 0,"
        " disabled: false}) { id } }", {"n": "Feast\nDay"})
    assert error.startswith('Invalid argument "holiday.name"'), error
    error = await org.admin.gql.error(
        "mutation($id: SvcId!, $l: [String]) {"
        " editTagCategoryLevelNames(id: $id, levelNames: $l) { id } }",
        {"id": "0" * 24, "l": ["ok", "Tab\there"]})
    assert error.startswith('Invalid argument "levelNames[1]"'), error
    # Names with letters of any script, spaces and punctuation are names.
    project = await org.admin.gql(
        "mutation($n: SvcName!) { addProject(name: $n) { id name } }",
        {"n": "Zoë's « Ünïcode » project — 東京"})
    assert project["addProject"]["name"] == "Zoë's « Ünïcode » project — 東京"


async def test_the_legacy_interface_refuses_them(org: Org) -> None:
    legacy = await legacy_for(org, org.admin)
    message = await legacy.error("company.create", company={"name": "Acme\r\nBcc: x"})
    assert "control characters" in message, message
    assert (await legacy.ok("company.list"))["companies"] == []
