"""runInlineReport over POST /graphql: hours, billing, cost and margin of time records grouped
by person and/or project, with rates resolved per entry; permission and bad input."""

from __future__ import annotations

from typing import Any

from tests.service.rates.test_billing_rates import add_project, add_rate, eur
from tests.support import Org

FEB = 1769904000000  # 2026-02-01T00:00Z
MAR = 1772323200000  # 2026-03-01T00:00Z
APR = 1775001600000  # 2026-04-01T00:00Z
DAY = 86_400_000
HOUR = 3_600_000

REPORT = """query($records: [SvcRecordType]!, $period: SvcReportParamPeriodInput,
  $attributes: SvcReportParamAttributesInput, $options: SvcReportParamOptionsInput,
  $filters: [SvcReportFilter]) {
  runInlineReport(records: $records, period: $period, attributes: $attributes,
                  options: $options, filters: $filters) {
    id pending error expire { ts }
    rows { entities { person { name } projects { name } }
      quantities { hours hourBilling hourlyBilling dailyBilling hourCost hourlyCost dailyCost
                   margin marginPercent billableHours billablePercentage } } } }"""
MARCH = {"target": "custom", "start": MAR, "end": APR}


async def record(org: Org, person: str, start: int, hours: float, *projects: str,
                 non_billable: bool = False) -> None:
    data = await org.admin.gql(
        "mutation($s: SvcTimestamp!, $d: Int!, $p: SvcId!, $ps: [SvcId]) { addTimeRecord("
        "startTime: $s, duration: $d, personId: $p, projectIds: $ps) { id } }",
        {"s": start, "d": int(hours * HOUR), "p": person, "ps": list(projects)},
    )
    if non_billable:
        await org.admin.gql(
            "mutation($id: SvcId!) { editTimeRecordNonBillable(id: $id, nonBillable: true) "
            "{ id } }", {"id": data["addTimeRecord"]["id"]})


async def setup(org: Org) -> dict[str, Any]:
    bob = await org.add_member("Bob")
    top = await add_project(org, "Top")
    sub = await add_project(org, "Sub", top)
    other = await add_project(org, "Other")
    ada = org.admin.id
    await add_rate(org.admin, "Organisation", a=eur(10000), s=FEB)
    split = await add_rate(org.admin, "Project", entity=("projectId", top), a=eur(15000),
                           t="persons", s=FEB)
    await org.admin.gql(
        "mutation($r: SvcId!, $e: SvcId!) { addBillingSplit(rateId: $r, entityId: $e, "
        "amount: {value: 20000, currency: \"EUR\"}, nonBillable: false) { id } }",
        {"r": split["id"], "e": bob.id})
    await add_rate(org.admin, "Project", entity=("projectId", other), a=eur(80000), m="daily",
                   s=FEB)
    await add_rate(org.admin, "Person", entity=("personId", ada), a=eur(11000), s=FEB)
    await add_rate(org.admin, "Person", entity=("personId", ada), a=eur(12000), s=MAR)
    await add_rate(org.admin, "Organisation", "Cost", a=eur(5000), s=FEB)
    await add_rate(org.admin, "Person", "Cost", entity=("personId", bob.id), a=eur(6000), s=FEB)

    await record(org, ada, MAR + DAY + 9 * HOUR, 2, sub)        # Top's rate: 2 x 150
    await record(org, bob.id, MAR + DAY + 9 * HOUR, 1.5, sub)   # Top split for Bob: 1.5 x 200
    await record(org, bob.id, MAR + 2 * DAY + 9 * HOUR, 3, other)   # daily 800, once
    await record(org, bob.id, MAR + 2 * DAY + 13 * HOUR, 2, other)
    await record(org, ada, MAR + 3 * DAY + 9 * HOUR, 1)         # Ada's rate from March: 120
    await record(org, ada, MAR - 2 * DAY, 1)                    # February: outside
    await record(org, bob.id, MAR + 4 * DAY, 1, sub, non_billable=True)
    return {"bob": bob, "top": top, "sub": sub, "other": other}


async def test_report_by_person_and_project(org: Org) -> None:
    ids = await setup(org)
    data = await org.admin.gql(REPORT, {"records": ["time"], "period": MARCH,
                                        "attributes": {"person": True}})
    result = data["runInlineReport"]
    assert result["pending"] is False and result["error"] is None and len(result["id"]) == 24
    rows = {r["entities"]["person"]["name"]: r["quantities"] for r in result["rows"]}
    assert rows["Ada Admin"] == {
        "hours": 3.0, "hourBilling": 42000.0, "hourlyBilling": 42000.0, "dailyBilling": 0.0,
        "hourCost": 15000.0, "hourlyCost": 15000.0, "dailyCost": 0.0, "margin": 27000.0,
        "marginPercent": 64.29, "billableHours": 3.0, "billablePercentage": 100,
    }
    assert rows["Bob"] == {
        "hours": 7.5, "hourBilling": 110000.0, "hourlyBilling": 30000.0, "dailyBilling": 80000.0,
        "hourCost": 45000.0, "hourlyCost": 45000.0, "dailyCost": 0.0, "margin": 65000.0,
        "marginPercent": 59.09, "billableHours": 6.5, "billablePercentage": 87,
    }

    data = await org.admin.gql(REPORT, {"records": ["time"], "period": MARCH,
                                        "attributes": {"person": True, "projects": True}})
    rows = {(r["entities"]["person"]["name"], tuple(p["name"] for p in r["entities"]["projects"])):
            r["quantities"] for r in data["runInlineReport"]["rows"]}
    assert rows[("Bob", ("Other",))]["dailyBilling"] == 80000.0
    assert rows[("Bob", ("Sub",))]["hourBilling"] == 30000.0
    assert rows[("Bob", ("Sub",))]["billableHours"] == 1.5
    assert rows[("Ada Admin", ())]["hourBilling"] == 12000.0

    data = await org.admin.gql(REPORT, {"records": ["time"], "period": MARCH,
                                        "filters": [{"projectId": ids["top"]}]})
    (total,) = data["runInlineReport"]["rows"]
    assert total["entities"]["person"] is None and total["quantities"]["hours"] == 4.5
    assert total["quantities"]["hourBilling"] == 60000.0
    either = [{"projectId": ids["other"], "following": "OR"}, {"personId": org.admin.id}]
    data = await org.admin.gql(REPORT, {"records": ["time"], "period": MARCH,
                                        "filters": either})
    assert data["runInlineReport"]["rows"][0]["quantities"]["hours"] == 8.0  # 5 + Ada's 3
    both = [{"notProjectId": ids["other"]}, {"personId": ids["bob"].id}]
    data = await org.admin.gql(REPORT, {"records": ["time"], "period": MARCH,
                                        "filters": both})
    assert data["runInlineReport"]["rows"][0]["quantities"]["hours"] == 2.5

    # Another currency: left out, and said so.
    data = await org.admin.gql(REPORT, {"records": ["time"], "period": MARCH,
                                        "options": {"currency": "USD"}})
    assert "EUR" in data["runInlineReport"]["error"]
    assert data["runInlineReport"]["rows"][0]["quantities"]["hourBilling"] == 0.0


async def test_report_permission_and_visibility(org: Org) -> None:
    ids = await setup(org)
    bob = ids["bob"]
    denied = await bob.gql.denied(REPORT, {"records": ["time"], "period": MARCH,
                                           "options": {"billing": True}})
    assert denied == ["Query.runInlineReport"]
    data = await bob.gql(REPORT, {"records": ["time"], "period": MARCH,
                                  "attributes": {"person": True}})
    (row,) = data["runInlineReport"]["rows"]
    assert row["entities"]["person"]["name"] == "Bob"
    assert row["quantities"]["hours"] == 7.5 and row["quantities"]["hourBilling"] == 0.0
    assert row["quantities"]["billableHours"] == 6.5


async def test_report_bad_input(org: Org) -> None:
    cases = [
        ({"records": ["task"]}, "records[0]"),
        ({"records": []}, "records"),
        ({"records": ["time"], "period": {"target": "custom", "start": MAR}}, "period.end"),
        ({"records": ["time"], "period": {"target": "current"}}, "period.period"),
        ({"records": ["time"], "period": {"target": "soon"}}, "period.target"),
        ({"records": ["time"], "filters": [{"taskIds": ["0" * 24]}]}, "filters[0].taskIds"),
        ({"records": ["time"], "options": {"currency": "EURO"}}, "options.currency"),
        ({"records": ["time"], "filters": [{}]}, "filters[0]"),
        ({"records": ["time"], "attributes": {"periodSplit": "week"}}, "attributes.periodSplit"),
    ]
    for variables, argument in cases:
        message = await org.admin.gql.error(REPORT, variables)
        assert message.startswith(f'Invalid argument "{argument}"'), (variables, message)
    data = await org.admin.gql(REPORT, {"records": ["time", "absence"],
                                        "period": {"target": "previous", "period": "week"}})
    assert data["runInlineReport"]["rows"] == []


async def test_fixed_fee_repeats_once_a_month(org: Org) -> None:
    project = await add_project(org, "Retainer")
    fee = await add_rate(org.admin, "Project", entity=("projectId", project), a=eur(50000),
                         m="fixed", s=FEB, r=True)
    assert fee["repeatEnabled"] is True and fee["repeat"]["occurrence"] == "month"
    for start in (MAR + DAY, MAR + 5 * DAY, APR + DAY):
        await record(org, org.admin.id, start, 1, project)
    may = {"target": "custom", "start": MAR, "end": APR + 31 * DAY}
    data = await org.admin.gql(REPORT, {"records": ["time"], "period": may})
    (row,) = data["runInlineReport"]["rows"]
    assert row["quantities"]["hourBilling"] == 100000.0  # March and April, once each
    assert row["quantities"]["hourlyBilling"] == 0.0 and row["quantities"]["hours"] == 3.0


async def test_absences_cost_only_when_the_type_involves_costs(org: Org) -> None:
    gql = org.admin.gql
    await add_rate(org.admin, "Organisation", a=eur(10000), s=FEB)
    await add_rate(org.admin, "Organisation", "Cost", a=eur(6000), s=FEB)
    holiday = (await gql('mutation { addAbsenceType(name: "Holiday") { id } }'))[
        "addAbsenceType"]["id"]
    sick = (await gql('mutation { addAbsenceType(name: "Sick") { id } }'))["addAbsenceType"]["id"]
    await gql("mutation($id: SvcId!) { editAbsenceTypeInvolveCosts(id: $id, involveCosts: true)"
              " { id } }", {"id": holiday})
    for absence, day in ((holiday, 1), (sick, 2)):
        await gql("mutation($s: SvcTimestamp!, $p: SvcId!, $a: SvcId) { addTimeRecord("
                  "startTime: $s, duration: 28800000, personId: $p, absenceId: $a) { id } }",
                  {"s": MAR + day * DAY, "p": org.admin.id, "a": absence})
    await record(org, org.admin.id, MAR + 3 * DAY, 2)
    data = await gql(REPORT, {"records": ["absence"], "period": MARCH})
    (row,) = data["runInlineReport"]["rows"]
    assert row["quantities"]["hours"] == 16.0 and row["quantities"]["hourCost"] == 48000.0
    assert row["quantities"]["hourBilling"] == 0.0 and row["quantities"]["billableHours"] == 0.0
    data = await gql(REPORT, {"records": ["time", "absence"], "period": MARCH})
    (row,) = data["runInlineReport"]["rows"]
    assert row["quantities"]["hours"] == 18.0 and row["quantities"]["hourBilling"] == 20000.0
    assert row["quantities"]["hourCost"] == 60000.0
    assert row["quantities"]["billablePercentage"] == 11


async def test_a_person_tag_rate_applies_from_the_tagging_date(org: Org) -> None:
    bob = await org.add_member("Bob")
    tag = (await org.admin.gql('mutation { addTag(name: "Seniors") { id } }'))["addTag"]["id"]
    await add_rate(org.admin, "Organisation", a=eur(10000), s=FEB)
    await add_rate(org.admin, "Tag", entity=("tagId", tag), a=eur(30000), s=FEB)
    await org.admin.gql("mutation($t: SvcId!, $p: SvcId!, $s: SvcTimestamp) { tagPerson("
                        "tagId: $t, personId: $p, startTime: $s) { id } }",
                        {"t": tag, "p": bob.id, "s": MAR + 2 * DAY})
    await record(org, bob.id, MAR + DAY + 9 * HOUR, 1)
    await record(org, bob.id, MAR + 3 * DAY + 9 * HOUR, 1)
    data = await org.admin.gql(REPORT, {"records": ["time"], "period": MARCH})
    assert data["runInlineReport"]["rows"][0]["quantities"]["hourBilling"] == 40000.0
