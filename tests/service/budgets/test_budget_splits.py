"""Task budgets, budget split rows, budget alerts (fired by recorded time, reset, fired again)
and getProjectBudgetData, over POST /graphql on both databases; every operation of the area
refused for an employee and present with the reference signature."""

from __future__ import annotations

from typing import Any

from tests.service.projects.test_tasks import add as add_task
from tests.service.rates.test_billing_rates import add_project, eur
from tests.service.role_refusals import assert_employee_refused
from tests.service.spec_tables import load_implemented
from tests.service.time_records.test_time_records import MONDAY
from tests.support import HOUR_MS, Org

BUDGET = """id quantity splitType billingAmount { value currency } costAmount { value }
  personSplit { person { id } billingAmount { value } costAmount { value } quantity }
  projectSplit { project { id } quantity } thresholdNotifiedAt overBudgetNotifiedAt"""
ADD_TASK_BUDGET = f"""mutation($t: SvcId!, $b: SvcInputAmount!, $c: SvcInputAmount!, $q: Int!,
  $s: SvcBudgetSplitType) {{ addTaskBudget(taskId: $t, billingAmount: $b, costAmount: $c,
  quantity: $q, splitType: $s) {{ {BUDGET} }} }}"""
ADD_PROJECT_BUDGET = """mutation($p: SvcId!, $q: Int!) { addProjectBudget(projectId: $p,
  billingAmount: {value: 100000, currency: "EUR"}, costAmount: {value: 50000, currency: "EUR"},
  quantity: $q) { id } }"""
SPLIT = f"""mutation($b: SvcId!, $e: SvcId!, $q: Int!) {{ addBudgetSplit(budgetId: $b,
  entityId: $e, billingAmount: {{value: 300, currency: "EUR"}},
  costAmount: {{value: 200, currency: "EUR"}}, quantity: $q) {{ {BUDGET} }} }}"""
RECORD = """mutation($start: SvcTimestamp!, $d: Int!, $p: SvcId!, $projects: [SvcId]) {
  addTimeRecord(startTime: $start, duration: $d, personId: $p, projectIds: $projects) { id } }"""
ALERTS = """query($p: SvcId!) { getProject(id: $p) { budgets { id thresholdNotifiedAt
  overBudgetNotifiedAt } } }"""

OPERATIONS = [
    "addTaskBudget", "deleteTaskBudget", "duplicateTaskBudget", "addBudgetSplit",
    "removeBudgetSplit", "editBudgetSplitBillingAmount", "editBudgetSplitCostAmount",
    "editBudgetSplitQuantity", "editBudgetSplitType", "resetBudgetOverBudgetAlert",
    "resetBudgetThresholdAlert",
]
REFERENCE = {op["name"]: op for op in load_implemented()}


def test_the_operations_are_in_the_reference_list() -> None:
    missing = [n for n in [*OPERATIONS, "getProjectBudgetData"] if n not in REFERENCE]
    assert missing == []


async def test_task_budgets_and_split_rows(org: Org) -> None:
    gql = org.admin.gql
    task = (await add_task(org, "Design"))["id"]
    budget = (await gql(ADD_TASK_BUDGET, {"t": task, "b": eur(90_000), "c": eur(40_000),
                                          "q": 30, "s": "persons"}))["addTaskBudget"]
    assert budget["splitType"] == "persons" and budget["personSplit"] == []
    bob = await org.add_member("Bob")
    split = (await gql(SPLIT, {"b": budget["id"], "e": bob.id, "q": 10}))["addBudgetSplit"]
    assert split["personSplit"] == [{"person": {"id": bob.id}, "billingAmount": {"value": 300},
                                     "costAmount": {"value": 200}, "quantity": 10}]
    edited = await gql(
        "mutation($b: SvcId!, $e: SvcId!) { editBudgetSplitBillingAmount(budgetId: $b, "
        "entityId: $e, amount: {value: 7, currency: \"EUR\"}) { id } "
        "editBudgetSplitCostAmount(budgetId: $b, entityId: $e, amount: {value: 6, currency: "
        "\"EUR\"}) { id } editBudgetSplitQuantity(budgetId: $b, entityId: $e, quantity: 12) "
        "{ personSplit { billingAmount { value } costAmount { value } quantity } } }",
        {"b": budget["id"], "e": bob.id})
    assert edited["editBudgetSplitQuantity"]["personSplit"] == [
        {"billingAmount": {"value": 7}, "costAmount": {"value": 6}, "quantity": 12}]
    copy = (await gql("mutation($t: SvcId!, $b: SvcId!) { duplicateTaskBudget(taskId: $t, "
                      f"budgetId: $b) {{ {BUDGET} }} }}", {"t": task, "b": budget["id"]}))[
        "duplicateTaskBudget"]
    assert copy["id"] != budget["id"] and copy["personSplit"][0]["quantity"] == 12

    # wrong input: each refusal names what was wrong
    for query, variables, expected in [
        (SPLIT, {"b": budget["id"], "e": bob.id, "q": 1}, 'Invalid argument "entityId"'),
        (SPLIT, {"b": budget["id"], "e": task, "q": 1}, 'Invalid argument "entityId"'),
        (SPLIT, {"b": budget["id"], "e": org.admin.id, "q": -1}, 'Invalid argument "quantity"'),
        (ADD_TASK_BUDGET, {"t": task, "b": eur(1), "c": eur(1), "q": 1, "s": "tags"},
         'Invalid argument "splitType"'),
        (ADD_TASK_BUDGET, {"t": "f" * 24, "b": eur(1), "c": eur(1), "q": 1},
         'Invalid argument "taskId"'),
        ("mutation($b: SvcId!, $e: SvcId!) { removeBudgetSplit(budgetId: $b, entityId: $e) "
         "{ id } }", {"b": budget["id"], "e": "e" * 24}, 'Invalid argument "entityId"'),
    ]:
        message = await gql.error(query, variables)
        assert message.startswith(expected), (variables, message)

    # changing the split type drops the rows of the other kind; a budget not split refuses rows
    projects = await gql(
        f"mutation($b: SvcId!) {{ editBudgetSplitType(id: $b, splitType: \"projects\") "
        f"{{ {BUDGET} }} }}", {"b": budget["id"]})
    assert projects["editBudgetSplitType"]["personSplit"] == []
    alpha = await add_project(org, "Alpha")
    rows = (await gql(SPLIT, {"b": budget["id"], "e": alpha, "q": 5}))["addBudgetSplit"]
    assert rows["projectSplit"] == [{"project": {"id": alpha}, "quantity": 5}]
    await gql("mutation($b: SvcId!, $e: SvcId!) { removeBudgetSplit(budgetId: $b, entityId: $e)"
              " { id } }", {"b": budget["id"], "e": alpha})
    await gql("mutation($b: SvcId!) { editBudgetSplitType(id: $b, splitType: null) { id } }",
              {"b": budget["id"]})
    message = await gql.error(SPLIT, {"b": budget["id"], "e": alpha, "q": 5})
    assert "is not split" in message and "editBudgetSplitType" in message

    listed = await gql("query($t: SvcId!) { getTask(id: $t) { budgets { id } } }", {"t": task})
    assert [b["id"] for b in listed["getTask"]["budgets"]] == [budget["id"], copy["id"]]
    await gql("mutation($t: SvcId!, $b: SvcId!) { deleteTaskBudget(taskId: $t, budgetId: $b) "
              "{ id } }", {"t": task, "b": budget["id"]})
    listed = await gql("query($t: SvcId!) { getTask(id: $t) { budgets { id } } }", {"t": task})
    assert listed["getTask"]["budgets"] == [{"id": copy["id"]}]
    audit = await gql('query { getAuditTrails(operations: ["addBudgetSplit", '
                      '"deleteTaskBudget"]) { operationName } }')
    assert sorted(a["operationName"] for a in audit["getAuditTrails"]) == [
        "addBudgetSplit", "addBudgetSplit", "deleteTaskBudget"]


async def test_alerts_fire_reset_and_fire_again(org: Org) -> None:
    """A 10-hour budget: 8 hours reach the default 80 % threshold, 10 the budget; a reset
    alert fires again on the next recorded time that still finds the budget over."""
    gql = org.admin.gql
    project = await add_project(org, "Harbor")
    sub = await add_project(org, "Harbor docks", project)
    await gql(ADD_PROJECT_BUDGET, {"p": project, "q": 10})

    async def record(hours: int, day: int, on: str = sub) -> None:
        await gql(RECORD, {"start": MONDAY + day * 24 * HOUR_MS, "d": hours * HOUR_MS,
                           "p": org.admin.id, "projects": [on]})

    async def alerts() -> dict[str, Any]:
        return (await gql(ALERTS, {"p": project}))["getProject"]["budgets"][0]  # type: ignore[no-any-return]

    await record(7, 0)
    assert (await alerts())["thresholdNotifiedAt"] is None
    await record(1, 1)  # 8 of 10 hours, on a subproject
    fired = await alerts()
    assert fired["thresholdNotifiedAt"] is not None and fired["overBudgetNotifiedAt"] is None
    await record(2, 2)
    fired = await alerts()
    assert fired["overBudgetNotifiedAt"] is not None
    reset = await gql("mutation($b: SvcId!) { resetBudgetThresholdAlert(id: $b) "
                      "{ thresholdNotifiedAt overBudgetNotifiedAt } }", {"b": fired["id"]})
    assert reset["resetBudgetThresholdAlert"] == {
        "thresholdNotifiedAt": None, "overBudgetNotifiedAt": fired["overBudgetNotifiedAt"]}
    await gql("mutation($b: SvcId!) { resetBudgetOverBudgetAlert(id: $b) { id } }",
              {"b": fired["id"]})
    assert (await alerts())["overBudgetNotifiedAt"] is None
    await record(1, 3, on=await add_project(org, "Elsewhere"))  # not this budget's time
    assert (await alerts())["thresholdNotifiedAt"] is None
    await record(1, 4)
    again = await alerts()
    assert again["thresholdNotifiedAt"] is not None and again["overBudgetNotifiedAt"] is not None


async def test_project_budget_data(org: Org) -> None:
    gql = org.admin.gql
    project = await add_project(org, "Atlas")
    sub = await add_project(org, "Atlas API", project)
    await add_project(org, "No budget")
    budget = (await gql(ADD_PROJECT_BUDGET, {"p": project, "q": 40}))["addProjectBudget"]
    await gql("mutation($b: SvcId!) { editBudgetSplitType(id: $b, splitType: \"projects\") "
              "{ id } }", {"b": budget["id"]})
    await gql(SPLIT, {"b": budget["id"], "e": sub, "q": 15})
    bob = await org.add_member("Bob")
    for person, hours in ((org.admin.id, 3), (bob.id, 2)):
        await gql(RECORD, {"start": MONDAY, "d": hours * HOUR_MS, "p": person,
                           "projects": [sub]})
    data = (await gql("""query { getProjectBudgetData { budgets { budgetId projectId quantity
      billingAmount costAmount splitType split { entityId quantity billingAmount } }
      actuals { projectId hours billing cost byPerson { personId hours } }
      forecasts { projectId hours } } }"""))["getProjectBudgetData"]
    assert data["budgets"] == [{
        "budgetId": budget["id"], "projectId": project, "quantity": 40.0,
        "billingAmount": 100000.0, "costAmount": 50000.0, "splitType": "projects",
        "split": [{"entityId": sub, "quantity": 15.0, "billingAmount": 300.0}]}]
    [actual] = data["actuals"]
    assert actual["projectId"] == project and actual["hours"] == 5.0
    assert sorted((p["personId"], p["hours"]) for p in actual["byPerson"]) == sorted(
        [(org.admin.id, 3.0), (bob.id, 2.0)])
    assert data["forecasts"] == [{"projectId": project, "hours": 0.0}]
    only = await gql("query($f: [SvcReportFilter]) { getProjectBudgetData(filters: $f) "
                     "{ actuals { hours } } }", {"f": [{"personId": bob.id}]})
    assert only["getProjectBudgetData"]["actuals"] == [{"hours": 2.0}]
    message = await gql.error("query { getProjectBudgetData(filters: [{status: \"a\"}]) "
                              "{ budgets { budgetId } } }")
    assert message.startswith('Invalid argument "filters[0].status"')
    employee = await org.add_member("Eve")
    assert await employee.gql.denied("query { getProjectBudgetData { budgets { budgetId } } }"
                                     ) == ["Query.getProjectBudgetData"]


def _value(type_name: str) -> Any:
    return {"SvcId": "0" * 24, "Int": 1, "SvcInputAmount": {"value": 1, "currency": "EUR"},
            "SvcBudgetSplitType": None}.get(type_name.rstrip("!"))


async def test_an_employee_is_refused_every_operation(org: Org) -> None:
    await assert_employee_refused(org, OPERATIONS, _value)
