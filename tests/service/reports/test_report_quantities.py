"""runInlineReport's further quantities over POST /graphql: business hours from the default
8-hour schedule minus a public holiday, overtime per day and per period, what remains of the
business hours, recorded days, the billing ratio; the tasks' effort and the expense quantities."""

from __future__ import annotations

import pytest

from tests.service.reports.test_inline_report import DAY, HOUR, MAR, record
from tests.support import Org

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow

MONDAY = MAR + DAY  # 2026-03-02, a Monday
QUERY = """query($period: SvcReportParamPeriodInput, $options: SvcReportParamOptionsInput) {
  runInlineReport(records: ["time"], period: $period, attributes: {person: true},
                  options: $options) {
    error rows { entities { person { name } }
      quantities { hours billableHours days businessHours businessHoursRemaining billingRatio
                   overtime { daily period balance } customFields { id value } } } } }"""
ALL = {"countScheduleDays": True, "overtimeDaily": True, "overtimePeriod": True,
       "businessHours": True, "businessHoursRemaining": True, "billingRatio": True}


async def test_schedule_quantities(org: Org) -> None:
    ada = org.admin.id
    added = await org.admin.gql(
        'mutation($d: SvcTimestamp!) { addOrganisationPublicHoliday(holiday: {name: "Fest", '
        "date: $d, disabled: false}) { id } }", {"d": MONDAY + 2 * DAY})
    assert added["addOrganisationPublicHoliday"]["id"] == org.id
    await record(org, ada, MONDAY + 8 * HOUR, 10)              # 2 h beyond the day
    await record(org, ada, MONDAY + DAY + 8 * HOUR, 8)
    await record(org, ada, MONDAY + 2 * DAY + 9 * HOUR, 3)     # the holiday: all overtime
    await record(org, ada, MONDAY + 3 * DAY + 9 * HOUR, 4, non_billable=True)
    week = {"target": "custom", "start": MONDAY, "end": MONDAY + 7 * DAY}

    data = await org.admin.gql(QUERY, {"period": week, "options": ALL})
    (row,) = data["runInlineReport"]["rows"]
    assert row["entities"]["person"]["name"] == "Ada Admin"
    assert row["quantities"] == {
        "hours": 25.0, "billableHours": 21.0, "days": 3.125,
        "businessHours": 32.0,             # five 8-hour days but the holiday
        "businessHoursRemaining": 7.0, "billingRatio": 65,   # 21 / 32
        "overtime": {"daily": 5.0, "period": 0.0, "balance": -7.0},
        "customFields": [],
    }

    two_days = {"target": "custom", "start": MONDAY, "end": MONDAY + 2 * DAY}
    data = await org.admin.gql(QUERY, {"period": two_days, "options": ALL})
    quantities = data["runInlineReport"]["rows"][0]["quantities"]
    assert quantities["overtime"] == {"daily": 2.0, "period": 2.0, "balance": 2.0}
    assert quantities["businessHours"] == 16.0 and quantities["businessHoursRemaining"] == 0.0
    assert quantities["billingRatio"] == 112

    # A saved report runs the same code.
    folder = (await org.admin.gql('mutation { createReportFolder(name: "Mine") { id } }'))[
        "createReportFolder"]["id"]
    saved = (await org.admin.gql(
        "mutation($f: SvcId!, $p: SvcReportParamPeriodInput, $o: SvcReportParamOptionsInput) {"
        ' createReport(name: "Week", folderId: $f, records: ["time"], period: $p, options: $o)'
        " { id } }", {"f": folder, "p": week, "o": ALL}))["createReport"]["id"]
    ran = (await org.admin.gql(
        "query($id: SvcId!) { runReport(id: $id) { rows { quantities { businessHours "
        "overtime { daily } } } } }", {"id": saved}))["runReport"]["rows"]
    assert ran == [{"quantities": {"businessHours": 32.0, "overtime": {"daily": 5.0}}}]

    # Without the options: no schedule is read; days count the default 8-hour day.
    data = await org.admin.gql(QUERY, {"period": week})
    quantities = data["runInlineReport"]["rows"][0]["quantities"]
    assert quantities["businessHours"] == 0.0 and quantities["billingRatio"] == 0
    assert quantities["overtime"] == {"daily": 0.0, "period": 0.0, "balance": 0.0}
    assert quantities["days"] == 3.125

    # A period longer than the planned days may cover is refused by name.
    year = {"target": "custom", "start": MONDAY, "end": MONDAY + 400 * DAY}
    message = await org.admin.gql.error(QUERY, {"period": year, "options": ALL})
    assert message.startswith('Invalid argument "period"'), message


EXPENSES = """query($records: [SvcRecordType]!, $period: SvcReportParamPeriodInput,
  $attributes: SvcReportParamAttributesInput, $filters: [SvcReportFilter]) {
  runInlineReport(records: $records, period: $period, attributes: $attributes,
                  filters: $filters) {
    error rows { entities { person { name } projects { name } }
      quantities { hours effort expenseAmount expenseQuantity expenseBilling } } } }"""


async def test_effort_and_expenses(org: Org) -> None:
    gql = org.admin.gql
    ada = org.admin.id
    bob = await org.add_member("Bob")
    project = (await gql('mutation { addProject(name: "Site") { id } }'))["addProject"]["id"]
    task = (await gql('mutation { addTask(name: "Build") { id } }'))["addTask"]["id"]
    await gql("mutation($id: SvcId!) { editTaskDuration(id: $id, effort: 90) { id } }",
              {"id": task})
    for start, hours in ((MONDAY + 9 * HOUR, 2), (MONDAY + DAY + 9 * HOUR, 1)):
        await gql("mutation($s: SvcTimestamp!, $p: SvcId!, $t: SvcId) { addTimeRecord("
                  "startTime: $s, duration: $d, personId: $p, taskId: $t) { id } }"
                  .replace("$d", str(hours * HOUR)), {"s": start, "p": ada, "t": task})
    kind = (await gql('mutation { addExpenseType(name: "Travel") { id } }'))[
        "addExpenseType"]["id"]
    expense = ("mutation($d: SvcTimestamp!, $e: SvcId!, $v: Int!, $c: SvcCurrency, "
               "$p: SvcId, $j: SvcId) { addExpenseRecord(date: $d, expenseTypeId: $e, "
               "value: $v, currency: $c, personId: $p, projectId: $j) { id } }")
    for person, value, currency, target in ((ada, 1250, "EUR", project), (ada, 399, "EUR", None),
                                            (bob.id, 700, "EUR", None),
                                            (ada, 5000, "USD", None)):
        await gql(expense, {"d": MONDAY + DAY, "e": kind, "v": value, "c": currency,
                            "p": person, "j": target})
    await gql(expense, {"d": MONDAY + 30 * DAY, "e": kind, "v": 1, "c": "EUR", "p": ada})
    week = {"target": "custom", "start": MONDAY, "end": MONDAY + 7 * DAY}

    data = await gql(EXPENSES, {"records": ["time", "expense"], "period": week,
                                "attributes": {"person": True}})
    result = data["runInlineReport"]
    assert result["error"] == "amounts in USD are left out: this report is in EUR"
    rows = {r["entities"]["person"]["name"]: r["quantities"] for r in result["rows"]}
    assert rows["Ada Admin"] == {"hours": 3.0, "effort": 1.5, "expenseAmount": 1649.0,
                                 "expenseQuantity": 2.0, "expenseBilling": 1250.0}
    assert rows["Bob"] == {"hours": 0.0, "effort": 0.0, "expenseAmount": 700.0,
                           "expenseQuantity": 1.0, "expenseBilling": 0.0}

    data = await gql(EXPENSES, {"records": ["expense"], "period": week,
                                "attributes": {"projects": True},
                                "filters": [{"projectId": project}]})
    (row,) = data["runInlineReport"]["rows"]
    assert [p["name"] for p in row["entities"]["projects"]] == ["Site"]
    assert row["quantities"]["expenseAmount"] == 1250.0 and row["quantities"]["hours"] == 0.0

    # A member: the expenses of the people they see only.
    data = await bob.gql(EXPENSES, {"records": ["expense"], "period": week})
    (row,) = data["runInlineReport"]["rows"]
    assert row["quantities"]["expenseAmount"] == 700.0

    # Time only: no expense is read.
    data = await gql(EXPENSES, {"records": ["time"], "period": week})
    (row,) = data["runInlineReport"]["rows"]
    assert row["quantities"]["expenseQuantity"] == 0.0 and row["quantities"]["effort"] == 1.5
