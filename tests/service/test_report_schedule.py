"""runInlineReport's schedule quantities over POST /graphql: business hours from the default
8-hour schedule minus a public holiday, overtime per day and per period, what remains of the
business hours, recorded days and the billing ratio."""

from __future__ import annotations

from tests.service.test_inline_report import DAY, HOUR, MAR, record
from tests.support import Org

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
