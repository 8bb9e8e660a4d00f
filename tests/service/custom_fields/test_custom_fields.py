"""Custom field definitions and values over POST /graphql, on SQLite and PostgreSQL: every
type and every option of the registry (a good and a bad sample each), a value breaking each
option refused naming the field and the option, the values' edits, defaults and double add,
archive / duplicate / delete, the lists and counts, and the audit trail of every mutation."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from plumbing.db import unit_of_work
from service.custom_fields.registry import TYPES
from service.custom_fields.sdl import option_mutation, value_mutation
from service.models import AuditTrail
from tests.service.custom_fields_support import (
    DAY_MS,
    FIELD,
    VALUE,
    add_field,
    add_value,
    add_value_error,
    edit,
    edit_error,
    time_record,
)
from tests.support import Org

# (type, option) -> (a value the option takes, a value it refuses or None).
OPTION_SAMPLES: dict[tuple[str, str], tuple[Any, Any]] = {
    ("text", "maxLength"): (20, -1),
    ("text", "minLength"): (2, 100_000),
    ("text", "validationRegex"): ("[A-Z]{2}-[0-9]+", "(a+)+$"),
    ("text", "placeholder"): ("e.g. CC-1", "x" * 300),
    ("text", "defaultValue"): ("CC-1", "c"),  # breaks minLength 2 / the regex
    ("text", "useAllowedValues"): (False, None),
    ("number", "min"): (0.0, None),
    ("number", "max"): (100.0, -5.0),  # below min 0
    ("number", "step"): (0.5, -1.0),
    ("number", "decimal"): (True, None),
    ("number", "decimalPlaces"): (1, 11),
    ("number", "prefix"): ("EUR ", "x" * 300),
    ("number", "suffix"): (" h", "x" * 300),
    ("number", "defaultValue"): (2.5, 200.0),  # above max 100
    ("date", "minDate"): (1_767_225_600_000, 1_767_225_600_001),
    ("date", "maxDate"): (1_798_761_600_000, 1_700_006_400_000),  # before minDate
    ("date", "defaultDate"): (1_772_409_600_000, 1_600_000_000_000),
    ("datetime", "minDatetime"): (1_767_225_600_000, None),
    ("datetime", "maxDatetime"): (1_798_761_600_000, 1_000.0),  # before min
    ("datetime", "defaultDatetime"): (1_772_409_600_000, 1.0),
    ("boolean", "defaultValue"): (True, None),
    ("boolean", "trueLabel"): ("Yes", "x" * 300),
    ("boolean", "falseLabel"): ("No", None),
    ("url", "placeholder"): ("https://", "x" * 300),
    ("url", "defaultValue"): ("https://example.com/doc", "javascript:alert(1)"),
}
ARGUMENT_TYPES = {"Int!": "Int!", "String": "String", "String!": "String!", "Float": "Float",
                  "Boolean!": "Boolean!", "Boolean": "Boolean"}

# type -> (option settings, [(value argument, value, option it breaks)], a good value).
VALUE_CASES: dict[str, tuple[dict[str, Any], list[tuple[Any, str]], Any]] = {
    "text": ({"minLength": 2, "maxLength": 8, "validationRegex": "[A-Z]+[0-9]*"},
             [("ABCDEFGHIJ", "maxLength"), ("A", "minLength"), ("abc", "validationRegex")],
             "AB12"),
    "number": ({"min": 0.0, "max": 10.0, "step": 0.5, "decimalPlaces": 1},
               [(-1.0, "min"), (10.5, "max"), (0.7, "step"), (1.25, "decimalPlaces")], 2.5),
    "date": ({"minDate": 1_767_225_600_000, "maxDate": 1_798_675_200_000},
             [(1_767_139_200_000, "minDate"), (1_798_761_600_000, "maxDate")],
             1_772_409_600_000),
    "datetime": ({"minDatetime": 1_767_225_600_000, "maxDatetime": 1_798_761_600_000},
                 [(1_000.0, "minDatetime"), (1_900_000_000_000, "maxDatetime")],
                 1_772_445_600_000),
}


def _arg(option_type: str) -> str:
    return ARGUMENT_TYPES[option_type]


def test_every_option_has_samples() -> None:
    rows = {(kind.name, option.name) for kind in TYPES for option in kind.options
            if option.edited}
    assert rows == set(OPTION_SAMPLES)


async def test_every_type_and_option_over_graphql(org: Org) -> None:
    for kind in TYPES:
        field = await add_field(org, f"{kind.name} field", kind.name, "#112233")
        assert field["fieldType"] == kind.name and field["color"] == "#112233"
        for other in TYPES:
            assert (field[other.options_attribute] is None) == (other is not kind)
        assert field[kind.options_attribute] == {
            o.name: o.default for o in kind.options}
        assert field["visibility"]["timeRecords"] == {
            "projectCategories": None, "taskCategories": None, "absences": False}
        for option in kind.options:
            if not option.edited:
                continue
            good, bad = OPTION_SAMPLES[(kind.name, option.name)]
            operation = option_mutation(kind, option)
            edited = await edit(org.admin.gql, operation, option.name, _arg(option.argument),
                                field["id"], good)
            assert edited[kind.options_attribute][option.name] == good, operation
            if bad is None:
                continue
            message = await edit_error(org.admin.gql, operation, option.name,
                                       _arg(option.argument), field["id"], bad)
            assert message.startswith(f'Invalid argument "{option.name}"'), (operation, message)
        # An option of another type is refused naming the field.
        other = next(t for t in TYPES if t is not kind)
        nullable = next(o for o in other.options if o.edited and not o.argument.endswith("!"))
        message = await edit_error(org.admin.gql, option_mutation(other, nullable),
                                   nullable.name, _arg(nullable.argument), field["id"], None)
        assert "is a" in message and f"{kind.name} field" in message
    text = (await org.admin.gql('{ getCustomFields(filter: [{name: "text"}]) { id } }')
            )["getCustomFields"][0]["id"]
    add = "mutation($id: SvcId!, $v: String!) { addCustomFieldTextOptionAllowedValue(" \
          "id: $id, value: $v) { textOptions { allowedValues } } }"
    remove = add.replace("addCustomField", "removeCustomField")
    for value in ("CC-1", "CC-22"):
        await org.admin.gql(add, {"id": text, "v": value})
    assert (await org.admin.gql.error(add, {"id": text, "v": "CC-1"})).startswith(
        'Invalid argument "value"')
    left = await org.admin.gql(remove, {"id": text, "v": "CC-1"})
    assert left["removeCustomFieldTextOptionAllowedValue"]["textOptions"] == {
        "allowedValues": ["CC-22"]}
    assert "not an allowed value" in await org.admin.gql.error(remove, {"id": text, "v": "X"})
    # A bad type is refused naming the argument.
    message = await org.admin.gql.error(
        'mutation { addCustomField(name: "X", fieldType: "colour") { id } }')
    assert message.startswith('Invalid argument "fieldType"') and "datetime" in message


async def test_values_obey_their_options(org: Org) -> None:
    employee = await org.add_member("Eve")
    record = await time_record(org.admin.gql, employee.id)
    for name, (options, broken, good) in VALUE_CASES.items():
        kind = next(t for t in TYPES if t.name == name)
        field = await add_field(org, f"Checked {name}", name)
        for option, value in options.items():
            await edit(org.admin.gql, option_mutation(kind, kind.option(option)), option,
                       _arg(kind.option(option).argument), field["id"], value)
        for value, option in broken:
            message = await add_value_error(org.admin.gql, field["id"], "timeRecord", record,
                                            kind.value_argument, value)
            assert message.startswith(f'Invalid argument "{kind.value_argument}"'), message
            assert f"option {option}" in message and f"'Checked {name}'" in message, message
        added = await add_value(employee.gql, field["id"], "timeRecord", record,
                                kind.value_argument, good)
        assert added[kind.value_argument] == good and added["timeRecord"]["id"] == record
        edit_value = (f"mutation($id: SvcId!, $v: {kind.value_type}) {{ "
                      f"{value_mutation(kind)}(id: $id, {kind.value_argument}: $v) "
                      f"{{ {kind.value_argument} }} }}")
        value, option = broken[0]
        message = await employee.gql.error(edit_value, {"id": added["id"], "v": value})
        assert f"option {option}" in message and f"'Checked {name}'" in message
        cleared = await employee.gql(edit_value, {"id": added["id"], "v": None})
        assert cleared[value_mutation(kind)][kind.value_argument] is None
    # Allowed values, a date that is not a day, a URL that is not one, the wrong argument.
    text = await add_field(org, "Cost centre", "text")
    await org.admin.gql('mutation($id: SvcId!) { a: addCustomFieldTextOptionAllowedValue('
                        'id: $id, value: "CC-1") { id } b: editCustomFieldTextOptionUse'
                        'AllowedValues(id: $id, useAllowedValues: true) { id } }',
                        {"id": text["id"]})
    message = await add_value_error(org.admin.gql, text["id"], "timeRecord", record,
                                    "textValue", "CC-9")
    assert "option allowedValues" in message and "'Cost centre'" in message
    assert "is a text field" in await add_value_error(
        org.admin.gql, text["id"], "timeRecord", record, "numberValue", 3.0)
    date = await add_field(org, "Due", "date")
    assert "start of a day" in await add_value_error(
        org.admin.gql, date["id"], "timeRecord", record, "dateValue", float(DAY_MS + 1))
    url = await add_field(org, "Ticket", "url")
    assert "http or https" in await add_value_error(
        org.admin.gql, url["id"], "timeRecord", record, "urlValue", "javascript:alert(1)")
    # The default applies when no value is given; an entity has one value of a field.
    flag = await add_field(org, "Billable note", "boolean")
    await edit(org.admin.gql, "editCustomFieldBooleanOptionDefaultValue", "defaultValue",
               "Boolean", flag["id"], True)
    value = await add_value(employee.gql, flag["id"], "timeRecord", record)
    assert value["booleanValue"] is True and value["customField"] == {"name": "Billable note"}
    assert "already has a value" in await add_value_error(
        employee.gql, flag["id"], "timeRecord", record, "booleanValue", False)
    listed = await employee.gql(
        f'query($r: SvcId!) {{ getCustomFieldValues(filter: [{{entityId: $r}}]) {{ {VALUE} }} '
        'countCustomFieldValues(filter: [{entityId: $r}]) }', {"r": record})
    assert listed["countCustomFieldValues"] == len(VALUE_CASES) + 1
    got = await employee.gql(f'{{ getCustomFieldValue(id: "{value["id"]}") {{ {VALUE} }} }}')
    assert got["getCustomFieldValue"] == value
    deleted = await employee.gql(
        f'mutation {{ deleteCustomFieldValue(id: "{value["id"]}") {{ id }} }}')
    assert deleted["deleteCustomFieldValue"]["id"] == value["id"]


async def test_archive_duplicate_delete_counts_and_audit(org: Org) -> None:
    employee = await org.add_member("Ann")
    record = await time_record(org.admin.gql, employee.id)
    field = await add_field(org, "Hours left", "number")
    await edit(org.admin.gql, "editCustomFieldNumberOptionMax", "max", "Float", field["id"], 8.0)
    copy = (await org.admin.gql(
        f'mutation {{ duplicateCustomField(id: "{field["id"]}", name: "Copy") {{ {FIELD} }} }}'
    ))["duplicateCustomField"]
    assert copy["id"] != field["id"] and copy["numberOptions"]["max"] == 8.0
    renamed = await org.admin.gql(
        f'mutation {{ editCustomFieldName(id: "{copy["id"]}", name: "Copy 2") {{ name }} '
        f'editCustomFieldColor(id: "{copy["id"]}", color: "#000000") {{ color }} '
        f'editCustomFieldType(id: "{copy["id"]}", fieldType: "text") {{ fieldType '
        "numberOptions { max } textOptions { maxLength } } }")
    assert renamed["editCustomFieldType"] == {
        "fieldType": "text", "numberOptions": None, "textOptions": {"maxLength": 255}}
    archived = await org.admin.gql(
        f'mutation {{ archiveCustomFields(ids: ["{field["id"]}", "{copy["id"]}"]) '
        "{ archived } }")
    assert archived["archiveCustomFields"] == [{"archived": True}, {"archived": True}]
    assert "archived" in await add_value_error(org.admin.gql, field["id"], "timeRecord",
                                               record, "numberValue", 1.0)
    counts = await org.admin.gql(
        "{ all: countCustomFields active: countCustomFields(filter: [{archived: false}]) "
        'named: getCustomFields(filter: [{name: "copy"}]) { name } }')
    assert counts == {"all": 2, "active": 0, "named": [{"name": "Copy 2"}]}
    await org.admin.gql(f'mutation {{ unarchiveCustomField(id: "{field["id"]}") {{ id }} '
                        f'archiveCustomField(id: "{field["id"]}") {{ id }} '
                        f'unarchiveCustomFields(ids: ["{field["id"]}"]) {{ id }} }}')
    value = await add_value(org.admin.gql, field["id"], "timeRecord", record, "numberValue", 4.0)
    message = await org.admin.gql.error(
        f'mutation {{ deleteCustomField(id: "{field["id"]}") {{ id }} }}')
    assert "1 value use it" in message
    assert "1 value use it" in await org.admin.gql.error(
        f'mutation {{ editCustomFieldType(id: "{field["id"]}", fieldType: "url") {{ id }} }}')
    await org.admin.gql(f'mutation {{ deleteCustomFieldValue(id: "{value["id"]}") {{ id }} }}')
    gone = await org.admin.gql(
        f'mutation {{ deleteCustomField(id: "{field["id"]}") {{ name }} }}')
    assert gone["deleteCustomField"]["name"] == "Hours left"
    assert (await org.admin.gql("{ countCustomFields }"))["countCustomFields"] == 1
    assert (await org.admin.gql.error(
        f'{{ getCustomField(id: "{field["id"]}") {{ id }} }}')).startswith('Invalid argument "id"')
    async with unit_of_work(org.live.service.sessions) as session:
        operations = set(await session.scalars(select(AuditTrail.operation_name).where(
            AuditTrail.organisation_id == org.id)))
    assert {"addCustomField", "editCustomFieldNumberOptionMax", "duplicateCustomField",
            "editCustomFieldName", "editCustomFieldColor", "editCustomFieldType",
            "archiveCustomFields", "unarchiveCustomField", "archiveCustomField",
            "unarchiveCustomFields", "addCustomFieldValue", "deleteCustomFieldValue",
            "deleteCustomField"} <= operations
