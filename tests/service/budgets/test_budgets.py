"""Project budgets over POST /graphql (billing amount, cost amount, quantity), and every
billing / cost / budget / report operation of this area against the reference signature."""

from __future__ import annotations

from typing import Any

from tests.service.rates.test_billing_rates import add_project, eur
from tests.service.spec_tables import load_implemented
from tests.support import Org

ADD = """mutation($p: SvcId!, $b: SvcInputAmount!, $c: SvcInputAmount!, $q: Int!,
  $t: SvcBudgetSplitType) {
  addProjectBudget(projectId: $p, billingAmount: $b, costAmount: $c, quantity: $q,
                   splitType: $t) { id billingAmount { value currency } costAmount { value }
                   quantity splitType } }"""

OPERATIONS = [
    *(f"{verb}{level}{kind}" for verb in ("add", "delete", "duplicate")
      for level in ("Organisation", "Tag", "Person", "Project") for kind in ("Billing", "Cost")),
    *(f"edit{kind}{field}" for kind in ("Billing", "Cost") for field in (
        "StartTime", "Method", "Amount", "SplitType", "RepeatEnabled", "RepeatOccurrence",
        "RepeatFrequency", "RepeatWeekPattern", "RepeatMonthPattern", "RepeatEndTime",
        "SplitAmount", "SplitNonBillable")),
    *(f"{verb}{kind}Split" for verb in ("add", "remove") for kind in ("Billing", "Cost")),
    "editRoleAuthorisations", "addProjectBudget", "deleteProjectBudget", "duplicateProjectBudget",
    "editBudgetBillingAmount", "editBudgetCostAmount", "editBudgetQuantity",
]


REFERENCE = {op["name"]: op for op in load_implemented()}


def test_every_operation_of_the_area_is_in_the_reference_list() -> None:
    """Their signatures are checked against the running schema by test_schema_coverage."""
    assert [name for name in [*OPERATIONS, "runInlineReport"] if name not in REFERENCE] == []


async def test_project_budgets(org: Org) -> None:
    gql = org.admin.gql
    project = await add_project(org, "Alpha")
    budget = (await gql(ADD, {"p": project, "b": eur(1_000_000), "c": eur(600_000), "q": 100,
                              "t": "persons"}))["addProjectBudget"]
    assert budget["billingAmount"] == eur(1_000_000) and budget["costAmount"] == {"value": 600_000}
    assert budget["quantity"] == 100 and budget["splitType"] == "persons"
    edited = await gql(
        "mutation($id: SvcId!) { editBudgetBillingAmount(id: $id, amount: {value: 5, currency: "
        "\"USD\"}) { billingAmount { value currency } } editBudgetCostAmount(id: $id, amount: "
        "{value: 4, currency: \"USD\"}) { costAmount { value currency } } "
        "editBudgetQuantity(id: $id, quantity: 7) { quantity } }", {"id": budget["id"]})
    assert edited["editBudgetBillingAmount"]["billingAmount"] == {"value": 5, "currency": "USD"}
    assert edited["editBudgetCostAmount"]["costAmount"] == {"value": 4, "currency": "USD"}
    assert edited["editBudgetQuantity"]["quantity"] == 7
    copy = (await gql("mutation($p: SvcId!, $b: SvcId!) { duplicateProjectBudget(projectId: $p,"
                      " budgetId: $b) { id quantity } }", {"p": project, "b": budget["id"]}))[
        "duplicateProjectBudget"]
    assert copy["id"] != budget["id"] and copy["quantity"] == 7
    await gql("mutation($p: SvcId!, $b: SvcId!) { deleteProjectBudget(projectId: $p, "
              "budgetId: $b) { id } }", {"p": project, "b": budget["id"]})
    listed = await gql("query($p: SvcId!) { getProject(id: $p) { budgets { id } } }",
                       {"p": project})
    assert listed["getProject"]["budgets"] == [{"id": copy["id"]}]

    for variables, argument in [
        ({"b": {"value": -1, "currency": "EUR"}}, "billingAmount.value"),
        ({"c": {"value": 1, "currency": "12"}}, "costAmount.currency"),
        ({"q": -3}, "quantity"),
        ({"t": "tags"}, "splitType"),
        ({"p": "f" * 24}, "projectId"),
    ]:
        message = await gql.error(ADD, {"p": project, "b": eur(1), "c": eur(1), "q": 1,
                                        **variables})
        assert message.startswith(f'Invalid argument "{argument}"'), (variables, message)
    other = await add_project(org, "Beta")
    message = await gql.error(
        "mutation($p: SvcId!, $b: SvcId!) { deleteProjectBudget(projectId: $p, budgetId: $b) "
        "{ id } }", {"p": other, "b": copy["id"]})
    assert message.startswith('Invalid argument "budgetId"')

    employee = await org.add_member("Eve")
    assert await employee.gql.denied(
        "query($p: SvcId!) { getProject(id: $p) { id budgets { id } } }", {"p": project}
    ) == ["SvcProject.budgets"]
    assert await employee.gql.denied(ADD, {"p": project, "b": eur(1), "c": eur(1), "q": 1}) == [
        "Mutation.addProjectBudget"]
    audit = await gql("query { getAuditTrails(operations: [\"addProjectBudget\", "
                      "\"editBudgetQuantity\"]) { operationName } }")
    assert len(audit["getAuditTrails"]) == 2


def _value(type_name: str, ids: dict[str, str]) -> Any:
    base = type_name.rstrip("!")
    return {
        "SvcId": ids.get("id", "0" * 24), "SvcTimestamp": 0, "Int": 1, "Boolean": False,
        "SvcInputAmount": {"value": 1, "currency": "EUR"}, "SvcRateMethod": "hourly",
        "SvcRateRepeatOccurrence": "month", "[SvcAuthorisationInput]": [],
    }.get(base)


async def test_every_operation_refuses_an_employee(org: Org) -> None:
    """Each mutation of the area, with well-formed arguments, refused for an employee."""
    employee = await org.add_member("Eve")
    for name in OPERATIONS:
        arguments: dict[str, str] = REFERENCE[name]["arguments"]
        declared = ", ".join(f"${a}: {t}" for a, t in arguments.items())
        passed = ", ".join(f"{a}: ${a}" for a in arguments)
        variables = {a: _value(t, {}) for a, t in arguments.items()}
        query = f"mutation({declared}) {{ {name}({passed}) {{ __typename }} }}"
        assert await employee.gql.denied(query, variables) == [f"Mutation.{name}"], name
    audit = await org.admin.gql("query { getAuditTrails { operationName } }")
    assert not [a for a in audit["getAuditTrails"] if a["operationName"] in OPERATIONS]
