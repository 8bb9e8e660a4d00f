"""Recurrent tasks over POST /graphql on both databases: a rule, skipping and unskipping an
occurrence, materialising one, splitting the series, deleting one task or the whole series;
bad rules refused naming the field; each operation refused for an employee."""

from __future__ import annotations

from typing import Any

from tests.service.projects.test_tasks import add as add_task
from tests.service.role_refusals import assert_employee_refused
from tests.service.spec_tables import load_implemented
from tests.service.time_records.test_time_records import MONDAY
from tests.support import DAY_MS, HOUR_MS, Org

OPERATIONS = ["editTaskRecurrence", "deleteRecurrentTask", "materializeTaskOccurrence",
              "skipTaskOccurrence", "unskipTaskOccurrence", "splitRecurrenceSeries"]
REFERENCE = {op["name"]: op for op in load_implemented()}
SERIES = """id name startTime { ts } endTime { ts } skippedOccurrences lastMaterializedIndex
  seriesId seriesIndex rootSeriesId recurrence { mode occurrence frequency weekPattern
  monthPattern { type day week dayOfWeek } holidayBehavior endTime count }"""
RULE = f"""mutation($id: SvcId!, $r: SvcTaskRecurrenceInput) {{
  editTaskRecurrence(id: $id, recurrence: $r) {{ {SERIES} }} }}"""
SKIP = f"""mutation($id: SvcId!, $i: Int!) {{ skipTaskOccurrence(id: $id, occurrenceIndex: $i)
  {{ {SERIES} }} }}"""
UNSKIP = f"""mutation($id: SvcId!, $i: Int!) {{ unskipTaskOccurrence(id: $id,
  occurrenceIndex: $i) {{ {SERIES} }} }}"""
MATERIALIZE = f"""mutation($id: SvcId!, $i: Int!, $name: SvcName) {{
  materializeTaskOccurrence(id: $id, occurrenceIndex: $i, name: $name) {{ {SERIES} }} }}"""
SPLIT = f"""mutation($id: SvcId!, $i: Int!, $at: SvcTimestamp!) {{
  splitRecurrenceSeries(id: $id, occurrenceIndex: $i, occurrenceStartTime: $at)
  {{ {SERIES} }} }}"""
GET = f"query($id: SvcId!) {{ getTask(id: $id) {{ {SERIES} }} }}"
DELETE = """mutation($id: SvcId!, $scope: SvcDeleteRecurrentScope!) {
  deleteRecurrentTask(id: $id, scope: $scope) { id } }"""
START = MONDAY + 9 * HOUR_MS
DAILY = {"mode": "calendar", "occurrence": "day", "frequency": 1, "count": 10}


def test_the_operations_are_in_the_reference_list() -> None:
    assert [n for n in OPERATIONS if n not in REFERENCE] == []


async def _series(org: Org) -> str:
    task = (await add_task(org, "Standup"))["id"]
    await org.admin.gql("mutation($id: SvcId!, $s: SvcTimestamp, $e: SvcTimestamp) { "
                        "editTaskPeriod(id: $id, startTime: $s, endTime: $e) { id } }",
                        {"id": task, "s": START, "e": START + HOUR_MS})
    return task


async def test_skip_materialize_split_and_delete(org: Org) -> None:
    gql = org.admin.gql
    task = await _series(org)
    rule = (await gql(RULE, {"id": task, "r": DAILY}))["editTaskRecurrence"]
    assert rule["recurrence"] == {**DAILY, "weekPattern": None, "monthPattern": None,
                                  "holidayBehavior": None, "endTime": None}
    assert rule["skippedOccurrences"] == []

    skipped = (await gql(SKIP, {"id": task, "i": 2}))["skipTaskOccurrence"]
    assert skipped["skippedOccurrences"] == [2]
    for query, index, expected in [(SKIP, 2, "is skipped"), (MATERIALIZE, 2, "is skipped"),
                                   (SKIP, 10, "has no occurrence 10"),
                                   (SKIP, 0, "occurrence 0 is the series' task"),
                                   (UNSKIP, 3, "is not skipped")]:
        message = await gql.error(query, {"id": task, "i": index})
        assert message.startswith('Invalid argument "occurrenceIndex"'), message
        assert expected in message, message
    assert (await gql(UNSKIP, {"id": task, "i": 2}))["unskipTaskOccurrence"][
        "skippedOccurrences"] == []

    made = (await gql(MATERIALIZE, {"id": task, "i": 2, "name": "Standup (Wed)"}))[
        "materializeTaskOccurrence"]
    assert made["name"] == "Standup (Wed)" and made["recurrence"] is None
    assert made["startTime"] == {"ts": START + 2 * DAY_MS}
    assert made["endTime"] == {"ts": START + 2 * DAY_MS + HOUR_MS}
    assert (made["seriesId"], made["seriesIndex"], made["rootSeriesId"]) == (task, 2, task)
    assert (await gql(GET, {"id": task}))["getTask"]["lastMaterializedIndex"] == 2
    message = await gql.error(SKIP, {"id": task, "i": 2})
    assert "already materialised" in message
    await gql(SKIP, {"id": task, "i": 7})
    later = (await gql(MATERIALIZE, {"id": task, "i": 8}))["materializeTaskOccurrence"]

    message = await gql.error(SPLIT, {"id": task, "i": 5, "at": START})
    assert message.startswith('Invalid argument "occurrenceStartTime"')
    second = (await gql(SPLIT, {"id": task, "i": 5, "at": START + 5 * DAY_MS}))[
        "splitRecurrenceSeries"]
    assert second["startTime"] == {"ts": START + 5 * DAY_MS}
    assert second["recurrence"]["count"] == 5 and second["skippedOccurrences"] == [2]
    assert (second["seriesId"], second["seriesIndex"], second["rootSeriesId"]) == (task, 5, task)
    assert second["lastMaterializedIndex"] == 3
    first = (await gql(GET, {"id": task}))["getTask"]
    assert first["recurrence"]["count"] == 5 and first["skippedOccurrences"] == []
    assert first["lastMaterializedIndex"] == 2
    moved = (await gql(GET, {"id": later["id"]}))["getTask"]
    assert (moved["seriesId"], moved["seriesIndex"]) == (second["id"], 3)
    message = await gql.error(SKIP, {"id": task, "i": 5})
    assert "has no occurrence 5" in message

    # one materialised occurrence deleted stays skipped; the whole series goes at once
    await gql(DELETE, {"id": made["id"], "scope": "thisSourceOnly"})
    assert (await gql(GET, {"id": task}))["getTask"]["skippedOccurrences"] == [2]
    message = await gql.error(DELETE, {"id": task, "scope": "everything"})
    assert message.startswith('Invalid argument "scope"')
    await gql(DELETE, {"id": second["id"], "scope": "entireSeries"})
    for gone in (task, second["id"], later["id"]):
        assert (await gql.error(GET, {"id": gone})).startswith('Invalid argument "id"')
    audit = await gql('query { getAuditTrails(operations: ["splitRecurrenceSeries", '
                      '"deleteRecurrentTask"]) { operationName } }')
    assert len(audit["getAuditTrails"]) == 3


async def test_rules_and_their_refusals(org: Org) -> None:
    gql = org.admin.gql
    undated = (await add_task(org, "Someday"))["id"]
    message = await gql.error(RULE, {"id": undated, "r": DAILY})
    assert message.startswith('Invalid argument "id"') and "no start time" in message
    message = await gql.error(DELETE, {"id": undated, "scope": "entireSeries"})
    assert "not part of a recurrent series" in message
    task = await _series(org)
    for rule, field in [
        ({"occurrence": "hourly"}, "occurrence"),
        ({"mode": "sometimes"}, "mode"),
        ({"frequency": 0}, "frequency"),
        ({"weekPattern": [0]}, "weekPattern"),
        ({"occurrence": "week", "weekPattern": [7]}, "weekPattern"),
        ({"occurrence": "month", "monthPattern": {"type": "dayOfWeek", "week": 9,
                                                  "dayOfWeek": 1}}, "monthPattern.week"),
        ({"holidayBehavior": "ignore"}, "holidayBehavior"),
        ({"endTime": START - 1}, "endTime"),
        ({"count": 0}, "count"),
    ]:
        message = await gql.error(RULE, {"id": task, "r": {**DAILY, **rule}})
        assert message.startswith(f'Invalid argument "recurrence.{field}"'), (rule, message)
    # the last Friday of every month, four times
    monthly: dict[str, Any] = {"mode": "calendar", "occurrence": "month", "frequency": 1,
                               "count": 4, "monthPattern": {"type": "dayOfWeek", "week": -1,
                                                            "dayOfWeek": 4}}
    await gql(RULE, {"id": task, "r": monthly})
    made = (await gql(MATERIALIZE, {"id": task, "i": 1}))["materializeTaskOccurrence"]
    assert made["startTime"] == {"ts": 1774602000000}  # Friday 2026-03-27 09:00 UTC
    assert "has no occurrence 4" in await gql.error(SKIP, {"id": task, "i": 4})
    cleared = (await gql(RULE, {"id": task, "r": None}))["editTaskRecurrence"]
    assert cleared["recurrence"] is None and cleared["skippedOccurrences"] is None
    message = await gql.error(RULE, {"id": made["id"], "r": DAILY})
    assert "occurrence 1 of series" in message


def _value(type_name: str) -> Any:
    return {"SvcId": "0" * 24, "Int": 1, "SvcTimestamp": 1,
            "SvcDeleteRecurrentScope": "entireSeries"}.get(type_name.rstrip("!"))


async def test_an_employee_is_refused_every_operation(org: Org) -> None:
    await assert_employee_refused(org, OPERATIONS, _value)
