"""Where custom field values may go and who may put them there, over POST /graphql and the
legacy interface, on SQLite and PostgreSQL: values on each kind of entity under the field's
visibility rules, the wrong role refused for every kind of operation, "Who has access?"
(people, tags, the account's switch), fields assigned to projects and time records, the
relations and their resets, and the legacy Custom Field resource."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import select

from plumbing.db import unit_of_work
from service.demo import find_demo_organisation, seed_demo
from service.models import Person
from service.organisation.provisioning import ensure_api_key
from tests.service.access_support import absence_type, project, tag, tag_person
from tests.service.custom_fields_support import (
    DAY_MS,
    FIELD,
    MONDAY_MS,
    add_field,
    add_value,
    add_value_error,
    time_record,
)
from tests.service.legacy.test_legacy import legacy_for
from tests.support import GQL, LiveServer, Org

SHOWN = "does not show on this"


async def _one(gql: GQL, query: str, variables: dict[str, Any] | None = None) -> Any:
    data = await gql(query, variables)
    return next(iter(data.values()))


async def _category(org: Org, kind: str, name: str) -> str:
    data = await _one(org.admin.gql, f'mutation {{ add{kind}Category(name: "{name}") {{ id }} }}')
    return str(data["id"])


async def _visibility(org: Org, operation: str, field_id: str, **arguments: Any) -> Any:
    declared = {"enabled": "Boolean!", "categoryIds": "[SvcId]", "categoryId": "SvcId!",
                "levels": "[Int]!"}
    variables = "".join(f", ${name}: {declared[name]}" for name in arguments)
    passed = "".join(f", {name}: ${name}" for name in arguments)
    return await _one(org.admin.gql, f"mutation($id: SvcId!{variables}) {{ {operation}("
                      f"id: $id{passed}) {{ visibility {{ persons absenceTypes projects {{ "
                      "categoryId levels } tasks { categoryId levels } timeRecords { "
                      "projectCategories taskCategories absences } } } }",
                      {"id": field_id, **arguments})


async def test_values_on_every_kind_follow_the_visibility(org: Org) -> None:
    employee = await org.add_member("Eve")
    alpha = await _category(org, "Project", "Alpha")
    beta = await _category(org, "Project", "Beta")
    parent = (await _one(org.admin.gql, 'mutation($c: SvcId) { addProject(name: "Apollo", '
                         "categoryId: $c) { id } }", {"c": alpha}))["id"]
    child = (await _one(org.admin.gql, 'mutation($c: SvcId, $p: SvcId) { addProject('
                        'name: "Lander", categoryId: $c, parentId: $p) { id } }',
                        {"c": alpha, "p": parent}))["id"]
    task = (await _one(org.admin.gql, 'mutation { addTask(name: "Design") { id } }'))["id"]
    crew = await tag(org, "Crew")
    leave = await absence_type(org, "Leave")
    record = await time_record(org.admin.gql, employee.id, [parent])
    away = await time_record(org.admin.gql, employee.id, absence_id=leave, day=1)
    field = (await add_field(org, "Note", "text"))["id"]
    text = ("textValue", "x")

    # Shown on time records only at first (worked time, not absences); tags always.
    await add_value(org.admin.gql, field, "timeRecord", record, *text)
    await add_value(org.admin.gql, field, "tag", crew, *text)
    for kind, entity in (("person", employee.id), ("absenceType", leave), ("project", parent),
                         ("task", task), ("timeRecord", away)):
        assert SHOWN in await add_value_error(org.admin.gql, field, kind, entity, *text), kind
    await _visibility(org, "editCustomFieldVisibilityPersons", field, enabled=True)
    await _visibility(org, "editCustomFieldVisibilityAbsenceTypes", field, enabled=True)
    await _visibility(org, "editCustomFieldVisibilityProjects", field, enabled=True)
    await _visibility(org, "editCustomFieldVisibilityTasks", field, enabled=True)
    shown = await _visibility(org, "editCustomFieldVisibilityTimeRecordAbsences", field,
                              enabled=True)
    assert shown["visibility"] == {
        "persons": True, "absenceTypes": True, "projects": [], "tasks": [],
        "timeRecords": {"projectCategories": None, "taskCategories": None, "absences": True}}
    for kind, entity in (("person", employee.id), ("absenceType", leave), ("project", parent),
                         ("task", task), ("timeRecord", away)):
        added = await add_value(org.admin.gql, field, kind, entity, *text)
        assert added["entityType"] == kind and added[kind]["id"] == entity
    assert "must be one of" in await add_value_error(org.admin.gql, field, "invoice", crew,
                                                     *text)

    # Projects of a category at some levels; time records of some project categories.
    levels = (await add_field(org, "Phase", "text"))["id"]
    await _visibility(org, "addCustomFieldVisibilityProject", levels, categoryId=alpha,
                      levels=[1])
    await add_value(org.admin.gql, levels, "project", child, *text)
    assert SHOWN in await add_value_error(org.admin.gql, levels, "project", parent, *text)
    assert "already listed" in await org.admin.gql.error(
        "mutation($id: SvcId!, $c: SvcId!) { addCustomFieldVisibilityProject(id: $id, "
        "categoryId: $c, levels: []) { id } }", {"id": levels, "c": alpha})
    edited = await _visibility(org, "editCustomFieldVisibilityProject", levels,
                               categoryId=alpha, levels=[1, 0, 1])
    assert edited["visibility"]["projects"] == [{"categoryId": alpha, "levels": [0, 1]}]
    await add_value(org.admin.gql, levels, "project", parent, *text)
    assert "not listed" in await org.admin.gql.error(
        "mutation($id: SvcId!, $c: SvcId!) { removeCustomFieldVisibilityProject(id: $id, "
        "categoryId: $c) { id } }", {"id": levels, "c": beta})
    await _visibility(org, "setCustomFieldVisibilityTimeRecordProjectCategories", levels,
                      categoryIds=[beta])
    assert SHOWN in await add_value_error(org.admin.gql, levels, "timeRecord", record, *text)
    # A field assigned to a record shows there whatever its visibility says.
    await org.admin.gql("mutation($r: SvcId!, $f: SvcId!) { assignCustomFieldToTimeRecord("
                        "timerecordId: $r, customFieldId: $f) { id } }",
                        {"r": record, "f": levels})
    await add_value(org.admin.gql, levels, "timeRecord", record, *text)
    await _visibility(org, "editCustomFieldVisibilityTimeRecords", levels, enabled=False)
    assert "editCustomFieldVisibilityTimeRecords first" in await org.admin.gql.error(
        "mutation($id: SvcId!) { setCustomFieldVisibilityTimeRecordTaskCategories(id: $id, "
        "categoryIds: []) { id } }", {"id": levels})
    assert (await org.admin.gql.error(
        "mutation($id: SvcId!) { addCustomFieldVisibilityTask(id: $id, categoryId: "
        '"000000000000000000000000", levels: [0]) { id } }', {"id": levels})
            ).startswith('Invalid argument "categoryId"')
    counted = await org.admin.gql(
        "query($f: SvcId!) { countCustomFieldValues(filter: [{customFieldId: $f}]) "
        "tags: countCustomFieldValues(filter: [{customFieldId: $f, entityType: \"tag\"}]) }",
        {"f": field})
    assert counted == {"countCustomFieldValues": 7, "tags": 1}


async def test_wrong_role_refused_and_who_has_access(org: Org) -> None:
    eve = await org.add_member("Eve")
    olga = await org.add_member("Olga")
    field = (await add_field(org, "Cost centre", "text"))["id"]
    await _visibility(org, "editCustomFieldVisibilityPersons", field, enabled=True)
    await _visibility(org, "editCustomFieldVisibilityProjects", field, enabled=True)
    apollo = await project(org, "Apollo")
    lander = await project(org, "Lander", apollo)
    gemini = await project(org, "Gemini")
    own = await time_record(org.admin.gql, eve.id, [lander])
    elsewhere = await time_record(org.admin.gql, eve.id, [gemini], day=1)
    theirs = await time_record(org.admin.gql, olga.id, [gemini])
    ids = {"f": field, "p": eve.id}
    refused = [
        'mutation { addCustomField(name: "X", fieldType: "text") { id } }',
        'mutation($f: SvcId!) { duplicateCustomField(id: $f, name: "X") { id } }',
        "mutation($f: SvcId!) { archiveCustomField(id: $f) { id } }",
        "mutation($f: SvcId!) { deleteCustomField(id: $f) { id } }",
        'mutation($f: SvcId!) { editCustomFieldName(id: $f, name: "X") { id } }',
        "mutation($f: SvcId!) { editCustomFieldTextOptionMaxLength(id: $f, maxLength: 3) "
        "{ id } }",
        'mutation($f: SvcId!) { addCustomFieldTextOptionAllowedValue(id: $f, value: "A") '
        "{ id } }",
        "mutation($f: SvcId!) { editCustomFieldVisibilityTasks(id: $f, enabled: true) { id } }",
        "mutation($f: SvcId!, $p: SvcId!) { assignCustomFieldToPerson(personId: $p, "
        "customFieldId: $f) { id } }",
        "mutation($p: SvcId!) { resetPersonCustomFieldsRelations(personId: $p) { id } }",
        "mutation { editOrganisationCustomFieldAvailability(available: false) { id } }",
    ]
    for operation in refused:
        denied = await eve.gql.denied(operation, ids)
        assert len(denied) == 1 and denied[0].startswith("Mutation."), operation
    # Values: a person's by the people permission, a project's by the projects permission,
    # a time record's by whoever may edit its person's records.
    for kind, entity in (("person", eve.id), ("project", apollo), ("timeRecord", theirs)):
        body = await eve.gql.body(
            "mutation($f: SvcId!, $t: String!, $e: SvcId!) { addCustomFieldValue("
            'customFieldId: $f, entityType: $t, entityId: $e, textValue: "A") { id } }',
            {"f": field, "t": kind, "e": entity})
        assert body["permissionsErrors"] == ["Mutation.addCustomFieldValue"], kind
    mine = await add_value(eve.gql, field, "timeRecord", own, "textValue", "CC-1")
    theirs_value = await add_value(org.admin.gql, field, "timeRecord", theirs, "textValue", "B")
    assert await olga.gql.denied(
        f'{{ getCustomFieldValue(id: "{mine["id"]}") {{ id }} }}') == ["Query.getCustomFieldValue"]
    seen = await olga.gql("{ getCustomFieldValues { id } countCustomFieldValues }")
    assert seen == {"getCustomFieldValues": [{"id": theirs_value["id"]}],
                    "countCustomFieldValues": 1}
    assert await olga.gql.denied(
        f'mutation {{ editCustomFieldValueText(id: "{mine["id"]}", textValue: "Z") {{ id }} }}'
    ) == ["Mutation.editCustomFieldValueText"]

    # Who has access: with "Show all custom fields" off, only those on the list.
    await org.admin.gql("mutation { editOrganisationCustomFieldAvailability(available: false) "
                        "{ availability { customFields } } }")
    assert await eve.gql("{ getCustomFields { id } countCustomFields }") == {
        "getCustomFields": [], "countCustomFields": 0}
    assert (await eve.gql.error(f'{{ getCustomField(id: "{field}") {{ id }} }}')
            ).startswith('Invalid argument "id"')
    assert "no access to the custom field" in await add_value_error(
        eve.gql, field, "timeRecord", elsewhere, "textValue", "CC-2")
    assign = ("mutation($f: SvcId!, $p: SvcId!) { assignCustomFieldToPerson(personId: $p, "
              "customFieldId: $f) { id sourceId sourceKey targetId targetKey } }")
    first = (await org.admin.gql(assign, ids))["assignCustomFieldToPerson"]
    again = (await org.admin.gql(assign, ids))["assignCustomFieldToPerson"]
    assert first == again and first["targetKey"] == "customFieldsOfPerson"
    assert (await eve.gql(f'{{ getCustomField(id: "{field}") {{ id }} }}'))["getCustomField"]
    crew = await tag(org, "Crew")
    await tag_person(org, crew, olga.id)
    await org.admin.gql("mutation($t: SvcId!, $f: SvcId!) { assignCustomFieldToTag(tagId: $t, "
                        "customFieldId: $f) { id } }", {"t": crew, "f": field})
    assert (await olga.gql("{ countCustomFields }"))["countCustomFields"] == 1
    # Assigned to a project: only records on it (or its subprojects) take a value.
    await org.admin.gql("mutation($p: SvcId!, $f: SvcId!) { assignCustomFieldToProject("
                        "projectId: $p, customFieldId: $f) { id } }", {"p": apollo, "f": field})
    assert "assigned to other projects" in await add_value_error(
        eve.gql, field, "timeRecord", elsewhere, "textValue", "CC-2")
    relations = await org.admin.gql(
        f'{{ getCustomField(id: "{field}") {{ relations {{ customFieldsOfPerson {{ value {{ id }} '
        "} customFieldsOfTag { value { id } } customFieldsOfProject { value { id } } "
        "customFieldsOfTask { relationId } customFieldsOfTimeRecord { relationId } } } "
        f'getPerson(id: "{eve.id}") {{ relations {{ customFields {{ value {{ name }} }} }} }} }}')
    assert relations["getCustomField"]["relations"] == {
        "customFieldsOfPerson": [{"value": {"id": eve.id}}],
        "customFieldsOfTag": [{"value": {"id": crew}}],
        "customFieldsOfProject": [{"value": {"id": apollo}}],
        "customFieldsOfTask": [], "customFieldsOfTimeRecord": []}
    assert relations["getPerson"]["relations"]["customFields"] == [
        {"value": {"name": "Cost centre"}}]
    await org.admin.gql(
        "mutation($p: SvcId!, $a: SvcId!, $t: SvcId!) { "
        "resetProjectCustomFieldsRelations(projectId: $a) { id } "
        "resetPersonCustomFieldsRelations(personId: $p) { id } "
        "resetTagCustomFieldsRelations(tagId: $t) { id } }",
        {"p": eve.id, "a": apollo, "t": crew})
    assert (await eve.gql("{ countCustomFields }"))["countCustomFields"] == 0
    message = await org.admin.gql.error(
        "mutation($f: SvcId!, $p: SvcId!) { unassignCustomFieldFromPerson(personId: $p, "
        "customFieldId: $f) { id } }", ids)
    assert message.startswith('Invalid argument "personId"') and "not assigned" in message
    # A value on a record follows the record: once the timesheet is approved, it is locked.
    await eve.gql("mutation($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { "
                  "submitTimesheet(personId: $p, startTime: $s, endTime: $e) { status } }",
                  {"p": eve.id, "s": MONDAY_MS, "e": MONDAY_MS + DAY_MS})
    locked = await eve.gql.error(
        f'mutation {{ editCustomFieldValueText(id: "{mine["id"]}", textValue: "Z") {{ id }} }}')
    assert "approved" in locked


async def test_legacy_custom_field_resource(org: Org) -> None:
    eve = await org.add_member("Eve")
    field = await add_field(org, "Cost centre", "number")
    await org.admin.gql(
        f'mutation {{ editCustomFieldNumberOptionSuffix(id: "{field["id"]}", suffix: " h") '
        f'{{ {FIELD} }} archiveCustomField(id: "{(await add_field(org, "Old", "url"))["id"]}")'
        " { id } }")
    admin = await legacy_for(org, org.admin)
    listed = (await admin.ok("custom_field.list"))["custom_fields"]
    assert [(f["name"], f["type"], f["active"]) for f in listed] == [
        ("Cost centre", "number", True), ("Old", "url", False)]
    assert listed[0]["id"] == field["id"] and listed[0]["options"]["suffix"] == " h"
    assert listed[0]["on"]["time_entries"] is True and listed[0]["on"]["persons"] is False
    active = (await admin.ok("custom_field.list", custom_field={"active": True}))
    assert [f["name"] for f in active["custom_fields"]] == ["Cost centre"]
    got = await admin.ok("custom_field.get", id=field["id"])
    assert got["custom_field"] == listed[0]
    assert "Custom field not found" in await admin.error("custom_field.get", id="nope")
    # The same "Who has access?" as GraphQL.
    await org.admin.gql("mutation { editOrganisationCustomFieldAvailability(available: false) "
                        "{ id } }")
    employee = await legacy_for(org, eve)
    assert (await employee.ok("custom_field.list"))["custom_fields"] == []
    assert "Custom field not found" in await employee.error("custom_field.get", id=field["id"])


async def test_the_demo_has_a_cost_centre(live: LiveServer, http: httpx.AsyncClient) -> None:
    now = live.clock.now_ms()
    async with unit_of_work(live.service.sessions) as session:
        await seed_demo(session, now)
        organisation = await find_demo_organisation(session)
        assert organisation is not None
        margaret = (await session.scalars(select(Person).where(
            Person.organisation_id == organisation.id,
            Person.email == "margaret@northwind.example"))).one()
        key = await ensure_api_key(session, margaret, now)
    gql = GQL(http, live.graphql_url, key)
    data = await gql(
        '{ getCustomFields(filter: [{name: "Cost centre"}]) { id fieldType textOptions { '
        "allowedValues useAllowedValues } } getCustomFieldValues(filter: [{entityType: "
        '"project"}]) { textValue project { name } } }')
    field = data["getCustomFields"][0]
    assert field["textOptions"] == {"allowedValues": ["CC-100", "CC-200", "CC-900"],
                                    "useAllowedValues": True}
    assert {(v["project"]["name"], v["textValue"]) for v in data["getCustomFieldValues"]} == {
        ("Harbor Bank", "CC-100"), ("Greenfield Foods", "CC-200"), ("Internal", "CC-900")}


async def test_the_right_roles(org: Org) -> None:
    """A manager reads the values on the records of the people they manage (not others'),
    and edits them as the records themselves (not in a draft timesheet); a custom role with
    the settings permission edits definitions, one with the projects permission puts values
    on projects."""
    eve = await org.add_member("Eve")
    olga = await org.add_member("Olga")
    mona = await org.add_member("Mona", role="manager")
    await org.admin.gql("mutation($m: SvcId!, $p: SvcId!) { makeManagerOfPerson(managerId: $m,"
                        " personId: $p) { id } }", {"m": mona.id, "p": eve.id})
    field = (await add_field(org, "Ticket", "url"))["id"]
    await _visibility(org, "editCustomFieldVisibilityProjects", field, enabled=True)
    managed = await time_record(org.admin.gql, eve.id)
    other = await time_record(org.admin.gql, olga.id)
    on_eve = await add_value(org.admin.gql, field, "timeRecord", managed, "urlValue",
                             "https://example.com/T-1")
    on_olga = await add_value(org.admin.gql, field, "timeRecord", other, "urlValue",
                              "https://example.com/T-2")
    seen = await mona.gql(f'{{ getCustomFieldValue(id: "{on_eve["id"]}") {{ urlValue }} '
                          "getCustomFieldValues { id } }")
    assert seen == {"getCustomFieldValue": {"urlValue": "https://example.com/T-1"},
                    "getCustomFieldValues": [{"id": on_eve["id"]}]}
    assert await mona.gql.denied(f'{{ getCustomFieldValue(id: "{on_olga["id"]}") {{ id }} }}'
                                 ) == ["Query.getCustomFieldValue"]
    # A draft timesheet is its owner's (and administrators'): as the record itself.
    assert "is a draft" in await mona.gql.error(
        f'mutation {{ editCustomFieldValueUrl(id: "{on_eve["id"]}", urlValue: null) {{ id }} }}')
    role = (await org.admin.gql(
        "mutation($a: [SvcAuthorisationInput]!) { addRole(name: \"Structure\", "
        "authorisations: $a) { id } }",
        {"a": [{"name": "settings", "manage": ["all"]}, {"name": "projects", "manage": ["all"]}]}
    ))["addRole"]["id"]
    await org.admin.gql("mutation($p: SvcId!, $r: SvcId!) { editPersonRole(id: $p, roleId: $r)"
                        " { id } }", {"p": olga.id, "r": role})
    made = await olga.gql('mutation { addCustomField(name: "Budget code", fieldType: "text") '
                          "{ id } }")
    await olga.gql("mutation($id: SvcId!) { editCustomFieldVisibilityProjects(id: $id, "
                   "enabled: true) { id } }", {"id": made["addCustomField"]["id"]})
    apollo = await project(org, "Apollo")
    value = await add_value(olga.gql, made["addCustomField"]["id"], "project", apollo,
                            "textValue", "B-7")
    assert value["project"] == {"id": apollo}
