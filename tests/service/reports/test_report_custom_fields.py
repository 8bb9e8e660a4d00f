"""runInlineReport's custom-field accumulators over POST /graphql: a number field on time
records summed per person (exactly, then rounded), a boolean counting its true values, a text
field counting the records that hold one; a field the caller cannot see, an unknown id and an
unsupported findOn refused by name."""

from __future__ import annotations

from typing import Any

from tests.service.custom_fields_support import (
    DAY_MS,
    MONDAY_MS,
    add_field,
    add_value,
    time_record,
)
from tests.support import Org

QUERY = """query($period: SvcReportParamPeriodInput, $attributes: SvcReportParamAttributesInput) {
  runInlineReport(records: ["time"], period: $period, attributes: $attributes) {
    error rows { entities { person { name } }
      quantities { hours customFields { id value } } } } }"""
MISSING = "ab" * 12
WEEK = {"target": "custom", "start": MONDAY_MS, "end": MONDAY_MS + 7 * DAY_MS}


def attributes(*items: dict[str, Any]) -> dict[str, Any]:
    return {"person": True, "customFields": list(items)}


async def test_custom_field_accumulators(org: Org) -> None:
    gql = org.admin.gql
    ada = org.admin.id
    bob = await org.add_member("Bob")
    km = (await add_field(org, "Km", "number"))["id"]
    on_site = (await add_field(org, "On site", "boolean"))["id"]
    ref = (await add_field(org, "Ref", "text"))["id"]
    first = await time_record(gql, ada)
    second = await time_record(gql, ada, day=1)
    third = await time_record(gql, ada, day=2)
    bobs = await time_record(gql, bob.id, day=1)
    outside = await time_record(gql, ada, day=9)          # after the period
    for record, value in ((first, 0.1), (second, 12.2), (third, 0.2), (bobs, 7.5),
                          (outside, 100.0)):
        await add_value(gql, km, "timeRecord", record, "numberValue", value)
    for record, value in ((first, True), (second, False), (bobs, True)):
        await add_value(gql, on_site, "timeRecord", record, "booleanValue", value)
    await add_value(gql, ref, "timeRecord", second, "textValue", "R-1")

    wanted = attributes({"customFieldId": km, "findOn": "time", "accumulate": True},
                        {"customFieldId": on_site}, {"customFieldId": ref})
    data = await gql(QUERY, {"period": WEEK, "attributes": wanted})
    rows = {r["entities"]["person"]["name"]: r["quantities"]
            for r in data["runInlineReport"]["rows"]}
    assert rows == {
        # 0.1 + 12.2 + 0.2 = 12.5 exactly (floats would give 12.499...), rounded half up: 13
        "Ada Admin": {"hours": 3.0, "customFields": [
            {"id": km, "value": 13}, {"id": on_site, "value": 1}, {"id": ref, "value": 1}]},
        # 7.5 rounds away from zero: 8
        "Bob": {"hours": 1.0, "customFields": [
            {"id": km, "value": 8}, {"id": on_site, "value": 1}, {"id": ref, "value": 0}]},
    }
    # Without attributes.customFields: no accumulator.
    data = await gql(QUERY, {"period": WEEK, "attributes": {"person": True}})
    assert all(r["quantities"]["customFields"] == [] for r in data["runInlineReport"]["rows"])

    # A member sees their own records' values while the field is theirs to see.
    data = await bob.gql(QUERY, {"period": WEEK, "attributes": attributes(
        {"customFieldId": km})})
    (row,) = data["runInlineReport"]["rows"]
    assert row["quantities"]["customFields"] == [{"id": km, "value": 8}]

    # "Show all custom fields" off and Bob not on the field's list: refused, naming it.
    await gql("mutation { editOrganisationCustomFieldAvailability(available: false) "
              "{ availability { customFields } } }")
    message = await bob.gql.error(QUERY, {"period": WEEK, "attributes": attributes(
        {"customFieldId": km})})
    assert message.startswith('Invalid argument "attributes.customFields[0].customFieldId"')
    assert "no access" in message and km in message
    data = await gql(QUERY, {"period": WEEK, "attributes": attributes({"customFieldId": km})})
    assert len(data["runInlineReport"]["rows"]) == 2

    # An unknown id, a findOn this report does not read, a field asked twice.
    message = await gql.error(QUERY, {"period": WEEK, "attributes": attributes(
        {"customFieldId": km}, {"customFieldId": MISSING})})
    assert message == ('Invalid argument "attributes.customFields[1].customFieldId": '
                       f"no custom field with id '{MISSING}'")
    message = await gql.error(QUERY, {"period": WEEK, "attributes": attributes(
        {"customFieldId": km, "findOn": "person"})})
    assert message.startswith('Invalid argument "attributes.customFields[0].findOn"')
    message = await gql.error(QUERY, {"period": WEEK, "attributes": attributes(
        {"customFieldId": km}, {"customFieldId": km})})
    assert "requested twice" in message
