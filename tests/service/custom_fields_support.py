"""Set-up helpers of the custom-field tests: fields, options and values made over GraphQL."""

from __future__ import annotations

from typing import Any

from tests.support import GQL, Org

FIELD = ("id name archived color fieldType visibility { persons absenceTypes "
         "projects { categoryId levels } tasks { categoryId levels } "
         "timeRecords { projectCategories taskCategories absences } } "
         "textOptions { maxLength minLength validationRegex placeholder defaultValue "
         "allowedValues useAllowedValues } dateOptions { minDate maxDate defaultDate } "
         "numberOptions { min max step decimal decimalPlaces prefix suffix defaultValue } "
         "urlOptions { placeholder defaultValue } "
         "datetimeOptions { minDatetime maxDatetime defaultDatetime } "
         "booleanOptions { defaultValue trueLabel falseLabel }")
VALUE = ("id customFieldId entityType textValue numberValue dateValue dateTimeValue urlValue "
         "booleanValue customField { name } person { id } project { id } task { id } "
         "tag { id } timeRecord { id } absenceType { id }")
ADD_VALUE = (
    "mutation($f: SvcId!, $t: String!, $e: SvcId!, $text: String, $number: Float, "
    "$date: Float, $dt: Float, $url: String, $bool: Boolean) { addCustomFieldValue("
    "customFieldId: $f, entityType: $t, entityId: $e, textValue: $text, numberValue: $number, "
    f"dateValue: $date, dateTimeValue: $dt, urlValue: $url, booleanValue: $bool) {{ {VALUE} }} }}"
)
VALUE_VARIABLES = {"textValue": "text", "numberValue": "number", "dateValue": "date",
                   "dateTimeValue": "dt", "urlValue": "url", "booleanValue": "bool"}
DAY_MS = 86_400_000
MONDAY_MS = 1_772_409_600_000  # Monday 2 March 2026, 00:00 UTC


async def add_field(org: Org, name: str, field_type: str, color: str | None = None
                    ) -> dict[str, Any]:
    data = await org.admin.gql(
        "mutation($n: SvcName!, $t: String!, $c: SvcColor) { addCustomField(name: $n, "
        f"fieldType: $t, color: $c) {{ {FIELD} }} }}", {"n": name, "t": field_type, "c": color})
    return dict(data["addCustomField"])


def field_mutation(operation: str, argument: str, graphql_type: str) -> str:
    return (f"mutation($id: SvcId!, $v: {graphql_type}) {{ {operation}(id: $id, "
            f"{argument}: $v) {{ {FIELD} }} }}")


async def edit(gql: GQL, operation: str, argument: str, graphql_type: str, field_id: str,
               value: Any) -> Any:
    return (await gql(field_mutation(operation, argument, graphql_type),
                      {"id": field_id, "v": value}))[operation]


async def edit_error(gql: GQL, operation: str, argument: str, graphql_type: str,
                     field_id: str, value: Any) -> str:
    return await gql.error(field_mutation(operation, argument, graphql_type),
                           {"id": field_id, "v": value})


def value_variables(field_id: str, entity_type: str, entity_id: str, argument: str | None,
                    value: Any) -> dict[str, Any]:
    variables: dict[str, Any] = {"f": field_id, "t": entity_type, "e": entity_id}
    if argument is not None:
        variables[VALUE_VARIABLES[argument]] = value
    return variables


async def add_value(gql: GQL, field_id: str, entity_type: str, entity_id: str,
                    argument: str | None = None, value: Any = None) -> dict[str, Any]:
    data = await gql(ADD_VALUE, value_variables(field_id, entity_type, entity_id, argument,
                                                value))
    return dict(data["addCustomFieldValue"])


async def add_value_error(gql: GQL, field_id: str, entity_type: str, entity_id: str,
                          argument: str | None = None, value: Any = None) -> str:
    return await gql.error(ADD_VALUE, value_variables(field_id, entity_type, entity_id,
                                                      argument, value))


async def time_record(gql: GQL, person_id: str, project_ids: list[str] | None = None,
                      task_id: str | None = None, absence_id: str | None = None,
                      day: int = 0) -> str:
    data = await gql(
        "mutation($p: SvcId!, $s: SvcTimestamp!, $pr: [SvcId], $t: SvcId, $a: SvcId) { "
        "addTimeRecord(personId: $p, startTime: $s, duration: 3600000, projectIds: $pr, "
        "taskId: $t, absenceId: $a) { id } }",
        {"p": person_id, "s": MONDAY_MS + 9 * 3_600_000 + day * DAY_MS, "pr": project_ids,
         "t": task_id, "a": absence_id})
    return str(data["addTimeRecord"]["id"])
