"""Saved reports and folders over POST /graphql: CRUD, folder filters / period / record scope,
sharing, runReport and getReportResult (totals equal getTimeRecords' sums exactly), the
recurrence settings, the audit trail; the right and the wrong role, hostile input."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
from sqlalchemy import select

from plumbing.db import unit_of_work
from service.demo import find_demo_organisation, seed_demo
from service.demo.reports import WEEKLY_REPORT
from service.models import Person
from service.organisation.provisioning import ensure_api_key
from tests.service.reports.test_inline_report import APR, DAY, HOUR, MAR, MARCH, setup
from tests.support import GQL, LiveServer, Org

FOLDER = "id name recordScope owner { name } sharedWith { name } period { target start end }"
REPORT_FIELDS = ("id name folder { id name } reccurenceEnabled notifyByEmail "
                 "reccurence { period target sendMode sendOffset hourOfDay lastRun { ts } } "
                 "params { records period { target } filters { personId projectId } "
                 "attributes { person projects } columnOrder } chart { chartType showTable }")
RESULT = ("id pending error expire { ts } rows { entities { person { name } projects { name } }"
          " quantities { hours hourBilling billableHours } }")
RUN = f"""query($id: SvcId!, $p: SvcReportParamPeriodInput, $f: [SvcReportFilter]) {{
  runReport(id: $id, period: $p, filters: $f) {{ {RESULT} }} }}"""
GET_RESULT = f"query($id: SvcId!) {{ getReportResult(id: $id) {{ {RESULT} }} }}"
TIME_RECORDS = """query($s: SvcTimestamp, $e: SvcTimestamp, $f: [SvcTimeRecordFilter]) {
  getTimeRecords(startTime: $s, endTime: $e, time: true, filter: $f) { duration person { id } }
}"""
TRAILS = """query($o: [String]) { getAuditTrails(operations: $o) { operationName } }"""


async def folder(gql: GQL, name: str = "Monthly") -> dict[str, Any]:
    data = await gql(f"mutation($n: SvcName!) {{ createReportFolder(name: $n) {{ {FOLDER} }} }}",
                     {"n": name})
    return dict(data["createReportFolder"])


async def report(gql: GQL, folder_id: str, **params: Any) -> dict[str, Any]:
    data = await gql(
        "mutation($n: SvcName!, $f: SvcId!, $r: [SvcRecordType]!, $p: SvcReportParamPeriodInput,"
        " $a: SvcReportParamAttributesInput, $fi: [SvcReportFilter], $c: [String]) {"
        " createReport(name: $n, folderId: $f, records: $r, period: $p, attributes: $a,"
        f" filters: $fi, columnOrder: $c) {{ {REPORT_FIELDS} }} }}",
        {"n": params.pop("name", "Hours"), "f": folder_id, "r": params.pop("records", ["time"]),
         **params})
    return dict(data["createReport"])


def by_person(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["entities"]["person"]["name"]: r["quantities"] for r in result["rows"]}


async def test_saved_report_totals_equal_the_time_records_and_the_kept_result(org: Org) -> None:
    ids = await setup(org)
    gql = org.admin.gql
    monthly = await folder(gql)
    assert monthly["owner"]["name"] == "Ada Admin" and monthly["sharedWith"] == []
    saved = await report(gql, monthly["id"], p=MARCH, a={"person": True}, c=["person", "hours"])
    assert saved["folder"]["id"] == monthly["id"] and saved["params"]["records"] == ["time"]
    assert saved["params"]["period"]["target"] == "custom"
    assert saved["params"]["columnOrder"] == ["person", "hours"]
    assert saved["reccurenceEnabled"] is False and saved["notifyByEmail"] == []
    assert saved["reccurence"]["period"] == "week" and saved["reccurence"]["hourOfDay"] == 8

    result = (await gql(RUN, {"id": saved["id"]}))["runReport"]
    assert result["pending"] is False and result["error"] is None
    rows = by_person(result)
    records = (await gql(TIME_RECORDS, {"s": MAR, "e": APR}))["getTimeRecords"]
    for member_id, name in ((org.admin.id, "Ada Admin"), (ids["bob"].id, "Bob")):
        durations = [r["duration"] for r in records if r["person"]["id"] == member_id]
        assert Decimal(str(rows[name]["hours"])) == Decimal(sum(durations)) / HOUR
    assert rows["Bob"]["hourBilling"] == 110000.0

    # a run's period and filters narrow it; the result is kept for its runner
    narrowed = (await gql(RUN, {"id": saved["id"], "f": [{"projectId": ids["top"]}]}))[
        "runReport"]
    kept = (await gql(GET_RESULT, {"id": narrowed["id"]}))["getReportResult"]
    assert kept["rows"] == narrowed["rows"] and kept["expire"] == narrowed["expire"]
    assert by_person(kept) == {"Ada Admin": {"hours": 2.0, "hourBilling": 30000.0,
                                             "billableHours": 2.0},
                               "Bob": {"hours": 2.5, "hourBilling": 30000.0,
                                       "billableHours": 1.5}}
    sub = [{"projectIds": [ids["sub"]]}]
    filtered = (await gql(TIME_RECORDS, {"s": MAR, "e": APR, "f": sub}))["getTimeRecords"]
    assert Decimal(sum(r["duration"] for r in filtered)) / HOUR == Decimal("4.5")

    # a folder's filters and record scope apply to every report in it
    await gql("mutation($id: SvcId!, $f: [SvcReportFilter]) { editReportFolderFilters(id: $id,"
              " filters: $f) { id } }", {"id": monthly["id"], "f": [{"personId": ids["bob"].id}]})
    result = (await gql(RUN, {"id": saved["id"]}))["runReport"]
    assert list(by_person(result)) == ["Bob"]
    await gql('mutation($id: SvcId!) { editReportFolderRecordScope(id: $id, recordScope: '
              '"absence") { recordScope } }', {"id": monthly["id"]})
    assert (await gql(RUN, {"id": saved["id"]}))["runReport"]["rows"] == []

    # the period: the run's, else the report's, else the folder's
    await gql("mutation($id: SvcId!) { editReportFolderRecordScope(id: $id, recordScope: null)"
              " { id } editReportFolderFilters(id: $id, filters: null) { id } }",
              {"id": monthly["id"]})
    result = (await gql(RUN, {"id": saved["id"], "p": {"target": "custom", "start": MAR,
                                                        "end": MAR + 2 * DAY}}))["runReport"]
    assert by_person(result)["Bob"]["hours"] == 1.5
    bare = await report(gql, monthly["id"], name="Bare")
    await gql("mutation($id: SvcId!, $p: SvcReportParamPeriodInput) { editReportFolderPeriod("
              "id: $id, period: $p) { period { target } } }", {"id": monthly["id"], "p": MARCH})
    (total,) = (await gql(RUN, {"id": bare["id"]}))["runReport"]["rows"]
    assert total["quantities"]["hours"] == 10.5

    edited = await gql(
        "mutation($id: SvcId!) { editReportName(id: $id, name: \"Renamed\") { name } "
        "editReportParams(id: $id, records: [\"time\", \"absence\"], attributes: {projects: "
        "true}) { params { records attributes { person projects } period { target } } } "
        "editReportChart(id: $id, chart: {chartType: \"bar\", showTable: true}) "
        "{ chart { chartType showTable } } }", {"id": saved["id"]})
    assert edited["editReportName"]["name"] == "Renamed"
    assert edited["editReportParams"]["params"] == {
        "records": ["time", "absence"], "attributes": {"person": None, "projects": True},
        "period": {"target": "custom"}}
    assert edited["editReportChart"]["chart"] == {"chartType": "bar", "showTable": True}

    reports = (await gql("{ getReports { name } getReportFolders { name } }"))
    assert [r["name"] for r in reports["getReports"]] == ["Renamed", "Bare"]
    deleted = await gql("mutation($id: SvcId!) { deleteReportFolder(id: $id) { name } }",
                        {"id": monthly["id"]})
    assert deleted["deleteReportFolder"]["name"] == "Monthly"
    assert (await gql("{ getReports { id } }"))["getReports"] == []
    message = await gql.error(GET_RESULT, {"id": narrowed["id"]})
    assert message.startswith('Invalid argument "id": no report result')
    trail = [e["operationName"] for e in (await gql(TRAILS, {"o": [
        "createReportFolder", "createReport", "editReportFolderFilters", "editReportName",
        "editReportChart", "deleteReportFolder"]}))["getAuditTrails"]]
    for operation in ("createReportFolder", "createReport", "editReportFolderFilters",
                      "editReportName", "editReportChart", "deleteReportFolder"):
        assert operation in trail


async def test_sharing_and_the_wrong_roles(org: Org) -> None:
    ids = await setup(org)
    bob = ids["bob"]
    carol = await org.add_member("Carol", role="manager")
    gql = org.admin.gql
    mine = await folder(gql, "Ada's")
    saved = await report(gql, mine["id"], p=MARCH, a={"person": True})

    # not shared: Bob sees nothing of it and can do nothing with it
    assert (await bob.gql("{ getReportFolders { id } getReports { id } }")) == {
        "getReportFolders": [], "getReports": []}
    assert await bob.gql.denied(RUN, {"id": saved["id"]}) == ["Query.runReport"]
    edit = 'mutation($id: SvcId!) { editReportName(id: $id, name: "Mine") { id } }'
    assert await bob.gql.denied(edit, {"id": saved["id"]}) == ["Mutation.editReportName"]
    share = """mutation($f: SvcId!, $p: SvcId!) { shareReportFolderWith(reportFolderId: $f,
      personId: $p) { sharedWith { name } } }"""
    assert await bob.gql.denied(share, {"f": mine["id"], "p": bob.id}) == [
        "Mutation.shareReportFolderWith"]
    result = (await gql(RUN, {"id": saved["id"]}))["runReport"]
    assert await bob.gql.denied(GET_RESULT, {"id": result["id"]}) == ["Query.getReportResult"]

    # shared: Bob sees and runs it, over his own records only; he still cannot edit it
    data = await gql(share, {"f": mine["id"], "p": bob.id})
    assert data["shareReportFolderWith"]["sharedWith"] == [{"name": "Bob"}]
    again = await gql(share, {"f": mine["id"], "p": bob.id})  # the double submit: no change
    assert again["shareReportFolderWith"]["sharedWith"] == [{"name": "Bob"}]
    listed = await bob.gql("{ getReports { name folder { owner { name } } } }")
    assert listed["getReports"] == [{"name": "Hours", "folder": {"owner": {"name": "Ada Admin"}}}]
    shown = (await bob.gql(RUN, {"id": saved["id"]}))["runReport"]
    assert list(by_person(shown)) == ["Bob"] and by_person(shown)["Bob"]["hourBilling"] == 0.0
    assert (await bob.gql(GET_RESULT, {"id": shown["id"]}))["getReportResult"]["rows"] == \
        shown["rows"]
    assert await bob.gql.denied(edit, {"id": saved["id"]}) == ["Mutation.editReportName"]
    assert await carol.gql.denied(RUN, {"id": saved["id"]}) == ["Query.runReport"]
    create = """mutation($f: SvcId!) { createReport(name: "X", folderId: $f, records: ["time"])
      { id } }"""
    assert await bob.gql.denied(create, {"f": mine["id"]}) == ["Mutation.createReport"]

    # an employee keeps folders of his own
    own = await folder(bob.gql, "Bob's")
    await report(bob.gql, own["id"])
    names = await gql("{ getReportFolders { name } }")  # the admin manages reports: all
    assert [f["name"] for f in names["getReportFolders"]] == ["Ada's", "Bob's"]

    unshare = """mutation($f: SvcId!, $p: SvcId!) { unshareReportFolderWith(reportFolderId: $f,
      personId: $p) { sharedWith { name } } }"""
    assert (await gql(unshare, {"f": mine["id"], "p": bob.id}))[
        "unshareReportFolderWith"]["sharedWith"] == []
    assert await bob.gql.denied(RUN, {"id": saved["id"]}) == ["Query.runReport"]
    message = await gql.error(unshare, {"f": mine["id"], "p": bob.id})
    assert message.startswith('Invalid argument "personId"')

    # a kept result expires
    org.live.clock.set(MAR + 40 * DAY)
    fresh = (await gql(RUN, {"id": saved["id"]}))["runReport"]
    org.live.clock.set(MAR + 42 * DAY)
    message = await gql.error(GET_RESULT, {"id": fresh["id"]})
    assert "expired" in message


async def test_bad_input_recurrence_and_emails(org: Org) -> None:
    gql = org.admin.gql
    mine = await folder(gql)
    saved = await report(gql, mine["id"])
    create = """mutation($f: SvcId!, $n: SvcName!, $r: [SvcRecordType]!,
      $fi: [SvcReportFilter], $p: SvcReportParamPeriodInput) { createReport(name: $n,
      folderId: $f, records: $r, filters: $fi, period: $p) { id } }"""
    cases = [
        ({"f": mine["id"], "n": "X", "r": ["task"]}, "records[0]"),
        ({"f": "0" * 24, "n": "X", "r": ["time"]}, "folderId"),
        ({"f": mine["id"], "n": "X", "r": ["time"], "fi": [{}]}, "filters[0]"),
        ({"f": mine["id"], "n": "X", "r": ["time"], "p": {"target": "soon"}}, "period.target"),
    ]
    for variables, argument in cases:
        message = await gql.error(create, variables)
        assert message.startswith(f'Invalid argument "{argument}"'), (variables, message)
    folder_cases = [
        ("editReportFolderRecordScope(id: $id, recordScope: \"expense\")", "recordScope"),
        ("editReportFolderFilters(id: $id, filters: [{taskIds: [\"0\"]}])".replace("0", "0" * 24),
         "filters[0].taskIds"),
    ]
    for field, argument in folder_cases:
        message = await gql.error(f"mutation($id: SvcId!) {{ {field} {{ id }} }}",
                                  {"id": mine["id"]})
        assert message.startswith(f'Invalid argument "{argument}"'), (field, message)

    recurrence = "reccurenceEnabled reccurence { period target sendMode sendOffset hourOfDay }"
    data = await gql(
        "mutation($id: SvcId!) { editReportReccurenceEnabled(id: $id, enabled: true) { id } "
        "editReportReccurencePeriod(id: $id, period: \"month\") { id } "
        "editReportReccurenceTarget(id: $id, target: \"current\") { id } "
        "editReportReccurenceSendMode(id: $id, sendMode: \"beforeEnd\") { id } "
        "editReportReccurenceSendOffset(id: $id, sendOffset: 2) { id } "
        f"editReportReccurenceHourOfDay(id: $id, hourOfDay: 17) {{ {recurrence} }} }}",
        {"id": saved["id"]})
    assert data["editReportReccurenceHourOfDay"] == {
        "reccurenceEnabled": True, "reccurence": {
            "period": "month", "target": "current", "sendMode": "beforeEnd", "sendOffset": 2,
            "hourOfDay": 17}}
    bad = [("Period(id: $id, period: \"hour\")", "period"),
           ("Target(id: $id, target: \"next\")", "target"),
           ("SendMode(id: $id, sendMode: \"now\")", "sendMode"),
           ("SendOffset(id: $id, sendOffset: 40)", "sendOffset"),
           ("HourOfDay(id: $id, hourOfDay: 24)", "hourOfDay")]
    for field, argument in bad:
        message = await gql.error(f"mutation($id: SvcId!) {{ editReportReccurence{field} "
                                  "{ id } }", {"id": saved["id"]})
        assert message.startswith(f'Invalid argument "{argument}"'), (field, message)
    data = await gql("mutation($id: SvcId!) { editReportReccurenceHourOfDay(id: $id, "
                     "hourOfDay: null) { reccurence { hourOfDay } } }", {"id": saved["id"]})
    assert data["editReportReccurenceHourOfDay"]["reccurence"]["hourOfDay"] == 8

    add = """mutation($id: SvcId!, $e: SvcEmail!) { addReportEmailToNotify(id: $id, email: $e)
      { notifyByEmail } }"""
    remove = add.replace("addReportEmailToNotify", "removeReportEmailToNotify")
    await gql(add, {"id": saved["id"], "e": "Boss@Example.org"})
    data = await gql(add, {"id": saved["id"], "e": "boss@example.org"})
    assert data["addReportEmailToNotify"]["notifyByEmail"] == ["boss@example.org"]
    assert "SvcEmail" in await gql.error(add, {"id": saved["id"], "e": "not mail"})
    data = await gql(remove, {"id": saved["id"], "e": "boss@example.org"})
    assert data["removeReportEmailToNotify"]["notifyByEmail"] == []
    assert (await gql.error(remove, {"id": saved["id"], "e": "boss@example.org"})).startswith(
        'Invalid argument "email"')
    bob = await org.add_member("Bob")
    assert await bob.gql.denied(add, {"id": saved["id"], "e": "b@example.org"}) == [
        "Mutation.addReportEmailToNotify"]
    assert await bob.gql.denied(
        "mutation($id: SvcId!) { editReportReccurenceEnabled(id: $id, enabled: true) { id } }",
        {"id": saved["id"]}) == ["Mutation.editReportReccurenceEnabled"]
    gone = await gql("mutation($id: SvcId!) { deleteReport(id: $id) { name } }",
                     {"id": saved["id"]})
    assert gone["deleteReport"]["name"] == "Hours"
    assert (await gql("{ getReports { id } }"))["getReports"] == []
    trail = [e["operationName"] for e in (await gql(TRAILS, {"o": [
        "editReportReccurencePeriod", "addReportEmailToNotify", "deleteReport"]}))[
        "getAuditTrails"]]
    assert {"editReportReccurencePeriod", "addReportEmailToNotify", "deleteReport"} <= set(trail)


FROM_TOKEN = f"""query($t: String!) {{ getReportResultFromToken(token: $t) {{ {RESULT} }} }}"""


async def test_a_report_link_opens_without_signing_in_until_it_expires(org: Org) -> None:
    ids = await setup(org)
    bob = ids["bob"]
    mine = await folder(org.admin.gql, "Linked")
    saved = await report(org.admin.gql, mine["id"], p=MARCH, a={"person": True})
    run = RUN.replace("runReport(id: $id, period: $p, filters: $f) {",
                      "runReport(id: $id, period: $p, filters: $f) { token")
    result = (await org.admin.gql(run, {"id": saved["id"]}))["runReport"]
    token = result.pop("token")
    assert len(token) >= 40
    nobody = org.gql_for(None)
    opened = (await nobody(FROM_TOKEN, {"t": token}))["getReportResultFromToken"]
    assert opened["rows"] == result["rows"]
    kept = (await org.admin.gql(GET_RESULT.replace("{ id pending", "{ token id pending"),
                                {"id": result["id"]}))["getReportResult"]
    assert kept["token"] != token  # each read mints its own link
    # nothing else runs without a key, nor with a token beside it; a forged token opens nothing
    body = await nobody.body("{ getReports { id } }")
    assert "data" not in body or not body.get("data")
    both = "query($t: String!) { getReportResultFromToken(token: $t) { id } getReports { id } }"
    body = await nobody.body(both, {"t": token})
    assert not body.get("data")
    for forged in (token[:-1] + ("A" if token[-1] != "A" else "B"), "", "x" * 500):
        message = await nobody.error(FROM_TOKEN, {"t": forged})
        assert message.startswith('Invalid argument "token"'), message

    # a shared report's link shows what its runner sees, and stops when unshared
    await org.admin.gql("mutation($f: SvcId!, $p: SvcId!) { shareReportFolderWith("
                        "reportFolderId: $f, personId: $p) { id } }",
                        {"f": mine["id"], "p": bob.id})
    bobs = (await bob.gql(run, {"id": saved["id"]}))["runReport"]["token"]
    shown = (await nobody(FROM_TOKEN, {"t": bobs}))["getReportResultFromToken"]
    assert list(by_person(shown)) == ["Bob"]
    await org.admin.gql("mutation($f: SvcId!, $p: SvcId!) { unshareReportFolderWith("
                        "reportFolderId: $f, personId: $p) { id } }",
                        {"f": mine["id"], "p": bob.id})
    assert await nobody.denied(FROM_TOKEN, {"t": bobs}) == ["Query.getReportResultFromToken"]

    # expiry: 14 days
    org.live.clock.set(org.live.clock.now_ms() + 15 * DAY)
    message = await nobody.error(FROM_TOKEN, {"t": token})
    assert "expired" in message
    inline = await org.admin.gql("{ runInlineReport(records: [\"time\"]) { token } }")
    assert inline["runInlineReport"]["token"] is None


async def test_the_demo_has_a_weekly_scheduled_report(live: LiveServer,
                                                      http: httpx.AsyncClient) -> None:
    now = live.clock.now_ms()
    async with unit_of_work(live.service.sessions) as session:
        await seed_demo(session, now)
        organisation = await find_demo_organisation(session)
        assert organisation is not None
        people = {p.email: p for p in await session.scalars(select(Person).where(
            Person.organisation_id == organisation.id))}
        keys = [await ensure_api_key(session, people[f"{name}@northwind.example"], now)
                for name in ("grace", "linus", "alan")]
    grace, linus, alan = (GQL(http, live.graphql_url, key) for key in keys)
    data = await grace(f"{{ getReports {{ {REPORT_FIELDS} folder {{ sharedWith {{ name }} }} }} }}")
    (weekly,) = [r for r in data["getReports"] if r["name"] == WEEKLY_REPORT]
    assert weekly["reccurenceEnabled"] is True
    assert weekly["reccurence"]["period"] == "week" and weekly["reccurence"]["target"] == \
        "previous"
    assert weekly["notifyByEmail"] == ["grace@northwind.example"]
    assert weekly["folder"]["sharedWith"] == [{"name": "Linus Pauling"}]
    assert (await linus(RUN, {"id": weekly["id"]}))["runReport"]["pending"] is False
    assert await alan.denied(RUN, {"id": weekly["id"]}) == ["Query.runReport"]


async def test_markup_and_work_from_home_quantities(org: Org) -> None:
    ids = await setup(org)
    gql = org.admin.gql
    records = (await gql("query($s: SvcTimestamp, $e: SvcTimestamp, $f: [SvcTimeRecordFilter])"
                         " { getTimeRecords(startTime: $s, endTime: $e, filter: $f) { id "
                         "duration } }", {"s": MAR, "e": APR,
                                          "f": [{"personId": ids["bob"].id}]}))["getTimeRecords"]
    three = [r for r in records if r["duration"] == 3 * HOUR]
    await gql("mutation($id: SvcId!) { editTimeRecordWfh(id: $id, wfh: true) { id } }",
              {"id": three[0]["id"]})
    data = await gql("query($p: SvcReportParamPeriodInput) { runInlineReport(records: "
                     "[\"time\"], period: $p, attributes: {person: true}) { rows { entities "
                     "{ person { name } } quantities { hours margin hourCost markupPercent "
                     "wfhHours wfhPercentage } } } }", {"p": MARCH})
    rows = by_person(data["runInlineReport"])
    bob = rows["Bob"]
    assert bob["wfhHours"] == 3 and bob["wfhPercentage"] == 40  # 3 of 7.5 hours
    assert bob["markupPercent"] == round(bob["margin"] / bob["hourCost"] * 100, 2)
    assert rows["Ada Admin"]["wfhHours"] == 0 and rows["Ada Admin"]["wfhPercentage"] == 0
    denied = await ids["bob"].gql("query($p: SvcReportParamPeriodInput) { runInlineReport("
                                  "records: [\"time\"], period: $p) { rows { quantities { "
                                  "markupPercent wfhHours } } } }", {"p": MARCH})
    (row,) = denied["runInlineReport"]["rows"]
    assert row["quantities"] == {"markupPercent": 0.0, "wfhHours": 3}
