"""Billing and cost rates over POST /graphql: the four levels, edits, splits, repeat, the
inherited `billings` / `costs` attributes, the Billing rates permission and bad input."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from plumbing.db import unit_of_work
from service.budgets.models import Budget
from service.rates.models import Rate
from tests.support import Member, Org

JAN = 1767225600000  # 2026-01-01T00:00Z
MAR = 1772323200000  # 2026-03-01T00:00Z

RATE = """id type entity { id type } startTime { ts } method splitType amount { value currency }
  repeatEnabled repeat { occurrence frequency weekPattern monthPattern endTime { ts }
  endTimeEnabled }
  personSplit { person { id } amount { value currency } nonBillable }
  projectSplit { project { id } amount { value } nonBillable }
  tagSplit { tag { id } amount { value } nonBillable }"""


def eur(value: int) -> dict[str, Any]:
    return {"value": value, "currency": "EUR"}


async def add_project(org: Org, name: str, parent: str | None = None) -> str:
    data = await org.admin.gql(
        "mutation($n: SvcName!, $p: SvcId) { addProject(name: $n, parentId: $p) { id } }",
        {"n": name, "p": parent},
    )
    return str(data["addProject"]["id"])


async def add_tag(org: Org, name: str) -> str:
    data = await org.admin.gql("mutation($n: SvcName!) { addTag(name: $n) { id } }", {"n": name})
    return str(data["addTag"]["id"])


async def add_rate(
    member: Member, level: str, kind: str = "Billing", entity: tuple[str, str] | None = None,
    **args: Any,
) -> dict[str, Any]:
    variables = {"s": JAN, "a": eur(10000), "m": "hourly", **args}
    entity_decl = f"${entity[0]}: SvcId!, " if entity else ""
    entity_arg = f"{entity[0]}: ${entity[0]}, " if entity else ""
    if entity:
        variables[entity[0]] = entity[1]
    query = (
        f"mutation({entity_decl}$s: SvcTimestamp!, $a: SvcInputAmount!, $m: SvcRateMethod!, "
        f"$t: SvcRateSplitType, $r: Boolean) {{ add{level}{kind}({entity_arg}startTime: $s, "
        f"amount: $a, method: $m, splitType: $t, repeatEnabled: $r) {{ {RATE} }} }}"
    )
    return (await member.gql(query, variables))[f"add{level}{kind}"]  # type: ignore[no-any-return]


ATTRS = """query($p: SvcId!) {
  currentOrganisation { billings { value { id } path { id collection name } } }
  getProject(id: $p) { billings { value { id amount { value } } path { id collection name } }
                       costs { value { id } path { collection } } }
}"""


async def test_levels_inheritance_and_audit(org: Org) -> None:
    top = await add_project(org, "Top")
    sub = await add_project(org, "Sub", top)
    tag = await add_tag(org, "Clients")
    o = await add_rate(org.admin, "Organisation", a=eur(5000))
    assert o["type"] == "billing" and o["entity"] == {"id": org.id, "type": "organisation"}
    assert o["startTime"]["ts"] == JAN and o["amount"] == eur(5000)
    assert o["repeat"]["endTimeEnabled"] is False and o["repeatEnabled"] is False

    data = await org.admin.gql(ATTRS, {"p": sub})
    assert data["getProject"]["billings"]["path"][0]["collection"] == "organisations"
    assert data["getProject"]["billings"]["value"][0]["id"] == o["id"]
    assert data["getProject"]["costs"] == {"value": [], "path": []}

    t = await add_rate(org.admin, "Tag", entity=("tagId", tag), a=eur(6000))
    await org.admin.gql("mutation($t: SvcId!, $p: SvcId!) { tagProject(tagId: $t, projectId: $p) "
                        "{ id } }", {"t": tag, "p": top})
    data = await org.admin.gql(ATTRS, {"p": sub})
    assert data["getProject"]["billings"]["path"] == [
        {"id": tag, "collection": "tags", "name": "Clients"}]
    p = await add_rate(org.admin, "Project", entity=("projectId", top), a=eur(7000))
    data = await org.admin.gql(ATTRS, {"p": sub})
    assert [v["id"] for v in data["getProject"]["billings"]["value"]] == [p["id"]]
    assert data["getProject"]["billings"]["path"][0]["name"] == "Top"
    assert data["currentOrganisation"]["billings"]["value"] == [{"id": o["id"]}]

    person = await add_rate(org.admin, "Person", "Cost", entity=("personId", org.admin.id),
                            a=eur(3000))
    assert person["type"] == "cost" and person["entity"]["type"] == "person"
    got = await org.admin.gql("query($id: SvcId!) { getPerson(id: $id) { costs { value { id } } "
                              "billings { path { collection } } } }", {"id": org.admin.id})
    assert got["getPerson"]["costs"]["value"] == [{"id": person["id"]}]
    assert got["getPerson"]["billings"]["path"] == [{"collection": "organisations"}]
    got = await org.admin.gql("query($id: SvcId!) { getTag(id: $id) { billings { value { id } } "
                              "} }", {"id": tag})
    assert got["getTag"]["billings"]["value"] == [{"id": t["id"]}]

    dup = (await org.admin.gql(
        "mutation($p: SvcId!, $b: SvcId!) { duplicateProjectBilling(projectId: $p, billingId: $b)"
        " { id amount { value } entity { id } } }", {"p": top, "b": p["id"]}))[
        "duplicateProjectBilling"]
    assert dup["id"] != p["id"] and dup["amount"] == {"value": 7000} and dup["entity"]["id"] == top
    deleted = await org.admin.gql(
        "mutation($p: SvcId!, $b: SvcId!) { deleteProjectBilling(projectId: $p, billingId: $b)"
        " { id } }", {"p": top, "b": dup["id"]})
    assert deleted["deleteProjectBilling"]["id"] == dup["id"]
    # The rate belongs to the project, not to another one / not a cost.
    message = await org.admin.gql.error(
        "mutation($p: SvcId!, $b: SvcId!) { deleteProjectBilling(projectId: $p, billingId: $b)"
        " { id } }", {"p": sub, "b": p["id"]})
    assert message.startswith('Invalid argument "billingId"')
    message = await org.admin.gql.error(
        "mutation($b: SvcId!) { deleteOrganisationCost(costId: $b) { id } }", {"b": o["id"]})
    assert message.startswith('Invalid argument "costId"')

    audit = await org.admin.gql(
        "query { getAuditTrails(operations: [\"addProjectBilling\", \"deleteProjectBilling\", "
        "\"duplicateProjectBilling\"]) { operationName responseId } }")
    assert sorted(a["operationName"] for a in audit["getAuditTrails"]) == [
        "addProjectBilling", "deleteProjectBilling", "duplicateProjectBilling"]


async def test_edits_splits_and_repeat(org: Org) -> None:
    gql = org.admin.gql
    bob = await org.add_member("Bob")
    project = await add_project(org, "Alpha")
    rate = await add_rate(org.admin, "Project", entity=("projectId", project), t="persons")
    rid = rate["id"]

    async def edit(field: str, argument: str, type_: str, value: Any) -> dict[str, Any]:
        query = (f"mutation($id: SvcId!, $v: {type_}) {{ editBilling{field}(id: $id, "
                 f"{argument}: $v) {{ {RATE} }} }}")
        return (await gql(query, {"id": rid, "v": value}))[f"editBilling{field}"]  # type: ignore[no-any-return]

    split = (await gql(
        "mutation($r: SvcId!, $e: SvcId!, $a: SvcInputAmount!) { addBillingSplit(rateId: $r, "
        f"entityId: $e, amount: $a, nonBillable: false) {{ {RATE} }} }}",
        {"r": rid, "e": bob.id, "a": eur(12000)}))["addBillingSplit"]
    assert split["personSplit"] == [
        {"person": {"id": bob.id}, "amount": eur(12000), "nonBillable": False}]
    message = await gql.error(
        "mutation($r: SvcId!, $e: SvcId!) { addBillingSplit(rateId: $r, entityId: $e, "
        "amount: {value: 1, currency: \"EUR\"}, nonBillable: false) { id } }",
        {"r": rid, "e": bob.id})
    assert message.startswith('Invalid argument "entityId"') and "already" in message
    message = await gql.error(
        "mutation($r: SvcId!, $e: SvcId!) { addBillingSplit(rateId: $r, entityId: $e, "
        "amount: {value: 1, currency: \"EUR\"}, nonBillable: false) { id } }",
        {"r": rid, "e": project})
    assert message.startswith('Invalid argument "entityId"')
    got = (await gql(
        "mutation($r: SvcId!, $e: SvcId!) { editBillingSplitNonBillable(rateId: $r, "
        "entityId: $e, nonBillable: true) { personSplit { nonBillable } } "
        "editBillingSplitAmount(rateId: $r, entityId: $e, amount: {value: 9, currency: \"EUR\"})"
        " { personSplit { amount { value } } } }", {"r": rid, "e": bob.id}))
    assert got["editBillingSplitNonBillable"]["personSplit"] == [{"nonBillable": True}]
    assert got["editBillingSplitAmount"]["personSplit"] == [{"amount": {"value": 9}}]
    message = await gql.error("mutation($id: SvcId!) { editBillingMethod(id: $id, "
                              "method: \"fixed\") { id } }", {"id": rid})
    assert message.startswith('Invalid argument "method"') and "split" in message
    removed = (await gql(
        "mutation($r: SvcId!, $e: SvcId!) { removeBillingSplit(rateId: $r, entityId: $e) "
        "{ personSplit { amount { value } } } }", {"r": rid, "e": bob.id}))["removeBillingSplit"]
    assert removed["personSplit"] == []
    assert (await edit("SplitType", "splitType", "SvcRateSplitType", None))["splitType"] is None
    message = await gql.error(
        "mutation($id: SvcId!) { editBillingSplitType(id: $id, splitType: \"projects\") { id } }",
        {"id": rid})
    assert message.startswith('Invalid argument "splitType"')

    assert (await edit("Method", "method", "SvcRateMethod!", "fixed"))["method"] == "fixed"
    assert (await edit("Amount", "amount", "SvcInputAmount!", {"value": 5, "currency": "usd"}))[
        "amount"] == {"value": 5, "currency": "USD"}
    assert (await edit("StartTime", "startTime", "SvcTimestamp!", MAR))["startTime"]["ts"] == MAR
    assert (await edit("RepeatEnabled", "enabled", "Boolean!", True))["repeatEnabled"] is True
    assert (await edit("RepeatOccurrence", "occurrence", "SvcRateRepeatOccurrence!", "week"))[
        "repeat"]["occurrence"] == "week"
    assert (await edit("RepeatFrequency", "frequency", "Int!", 2))["repeat"]["frequency"] == 2
    assert (await edit("RepeatWeekPattern", "weekPattern", "SvcRateRepeatWeekPattern", [4, 0]))[
        "repeat"]["weekPattern"] == [0, 4]
    assert (await edit("RepeatMonthPattern", "monthPattern", "SvcRateMonthPattern", "lastDay"))[
        "repeat"]["monthPattern"] == "lastDay"
    end = await edit("RepeatEndTime", "endTime", "SvcTimestamp", MAR + 86400000 * 60)
    assert end["repeat"]["endTimeEnabled"] is True
    assert end["repeat"]["endTime"]["ts"] == MAR + 86400000 * 60

    for field, argument, type_, value, named in [
        ("RepeatFrequency", "frequency", "Int!", 0, "frequency"),
        ("RepeatOccurrence", "occurrence", "SvcRateRepeatOccurrence!", "fortnight", "occurrence"),
        ("RepeatMonthPattern", "monthPattern", "SvcRateMonthPattern", "someday", "monthPattern"),
        ("RepeatWeekPattern", "weekPattern", "SvcRateRepeatWeekPattern", [9], "weekPattern"),
        ("RepeatEndTime", "endTime", "SvcTimestamp", JAN, "endTime"),
        ("Method", "method", "SvcRateMethod!", "hourly", "method"),  # still repeating
        ("Method", "method", "SvcRateMethod!", "weekly", "method"),
        ("Amount", "amount", "SvcInputAmount!", {"value": -1, "currency": "EUR"}, "amount.value"),
        ("Amount", "amount", "SvcInputAmount!", {"value": 1, "currency": "EURO"},
         "amount.currency"),
    ]:
        query = (f"mutation($id: SvcId!, $v: {type_}) {{ editBilling{field}(id: $id, "
                 f"{argument}: $v) {{ id }} }}")
        message = await gql.error(query, {"id": rid, "v": value})
        assert message.startswith(f'Invalid argument "{named}"'), (field, message)
    # Nothing of the refused edits was written.
    assert (await edit("RepeatFrequency", "frequency", "Int!", 2))["repeat"]["frequency"] == 2


async def test_bad_input_on_add(org: Org) -> None:
    gql = org.admin.gql
    cases = [
        ({"m": "monthly"}, "method"),
        ({"a": {"value": 1, "currency": "E1"}}, "amount.currency"),
        ({"t": "persons", "m": "fixed"}, "splitType"),
        ({"t": "projects"}, "splitType"),  # the organisation splits by persons or tags
        ({"r": True}, "repeatEnabled"),
        ({"s": -5}, "startTime"),
    ]
    for args, argument in cases:
        variables = {"s": JAN, "a": eur(1), "m": "hourly", **args}
        message = await gql.error(
            "mutation($s: SvcTimestamp!, $a: SvcInputAmount!, $m: SvcRateMethod!, "
            "$t: SvcRateSplitType, $r: Boolean) { addOrganisationBilling(startTime: $s, "
            "amount: $a, method: $m, splitType: $t, repeatEnabled: $r) { id } }", variables)
        assert message.startswith(f'Invalid argument "{argument}"'), (args, message)
    message = await gql.error(
        "mutation { addPersonCost(personId: \"0123456789abcdef01234567\", startTime: 0, "
        "amount: {value: 1, currency: \"EUR\"}, method: \"hourly\") { id } }")
    assert message.startswith('Invalid argument "personId"')
    data = await gql("query { currentOrganisation { billings { value { id } } } }")
    assert data["currentOrganisation"]["billings"]["value"] == []


async def test_billing_rates_permission(org: Org) -> None:
    employee = await org.add_member("Eve")
    manager = await org.add_member("Max", role="manager")
    rate = await add_rate(org.admin, "Organisation")
    for member in (employee, manager):
        denied = await member.gql.denied(
            "query { currentOrganisation { id billings { value { id } } } }")
        assert denied == ["SvcOrganisation.billings"]
        denied = await member.gql.denied(
            "mutation { addOrganisationBilling(startTime: 0, amount: {value: 1, currency: "
            "\"EUR\"}, method: \"hourly\") { id } }")
        assert denied == ["Mutation.addOrganisationBilling"]
        denied = await member.gql.denied(
            "mutation($id: SvcId!) { editBillingAmount(id: $id, amount: {value: 1, currency: "
            "\"EUR\"}) { id } }", {"id": rate["id"]})
        assert denied == ["Mutation.editBillingAmount"]

    roles = await org.admin.gql("query { getRoles { id name } }")
    manager_role = (await org.admin.gql("query { currentPerson { id } }"))
    assert manager_role
    role_id = (await manager.gql("query { currentPerson { role { id } } }"))["currentPerson"][
        "role"]["id"]
    assert role_id in [r["id"] for r in roles["getRoles"]]
    query = ("mutation($id: SvcId!, $a: [SvcAuthorisationInput]!) { editRoleAuthorisations("
             "id: $id, authorisations: $a) { id authorisations { name view manage } } }")
    denied = await manager.gql.denied(query, {"id": role_id, "a": []})
    assert denied == ["Mutation.editRoleAuthorisations"]
    message = await org.admin.gql.error(query, {"id": role_id, "a": [{"name": "rates"}]})
    assert message.startswith('Invalid argument "authorisations[0].name"')

    # view only: sees the rates, cannot edit them
    got = await org.admin.gql(query, {"id": role_id, "a": [{"name": "billingRates",
                                                             "view": ["all"]}]})
    assert got["editRoleAuthorisations"]["authorisations"] == [
        {"name": "billingRates", "view": ["all"], "manage": []}]
    data = await manager.gql("query { currentOrganisation { billings { value { id } } } }")
    assert data["currentOrganisation"]["billings"]["value"] == [{"id": rate["id"]}]
    assert await manager.gql.denied(
        "mutation($id: SvcId!) { deleteOrganisationBilling(billingId: $id) { id } }",
        {"id": rate["id"]}) == ["Mutation.deleteOrganisationBilling"]
    # manage: edits; the employee role is still refused
    await org.admin.gql(query, {"id": role_id, "a": [{"name": "billingRates", "manage": ["all"]}]})
    added = await add_rate(manager, "Person", "Cost", entity=("personId", employee.id))
    assert added["entity"]["id"] == employee.id
    assert await employee.gql.denied("query { currentPerson { costs { value { id } } } }") == [
        "SvcPerson.costs"]


async def test_deleting_the_entity_deletes_its_rates(org: Org) -> None:
    project = await add_project(org, "Gone")
    rate = await add_rate(org.admin, "Project", entity=("projectId", project), t="persons")
    employee = await org.add_member("Eve")
    await org.admin.gql(
        "mutation($r: SvcId!, $e: SvcId!) { addBillingSplit(rateId: $r, entityId: $e, "
        "amount: {value: 1, currency: \"EUR\"}, nonBillable: false) { id } }",
        {"r": rate["id"], "e": employee.id})
    await org.admin.gql(
        "mutation($p: SvcId!) { addProjectBudget(projectId: $p, billingAmount: {value: 1, "
        "currency: \"EUR\"}, costAmount: {value: 1, currency: \"EUR\"}, quantity: 1) { id } }",
        {"p": project})
    await org.admin.gql("mutation($id: SvcId!) { deleteProject(id: $id) { id } }",
                        {"id": project})
    async with unit_of_work(org.live.service.sessions) as session:
        rates = await session.scalar(select(func.count()).select_from(Rate).where(
            Rate.organisation_id == org.id))
        budgets = await session.scalar(select(func.count()).select_from(Budget).where(
            Budget.organisation_id == org.id))
    assert (rates, budgets) == (0, 0)
    message = await org.admin.gql.error(
        "mutation($id: SvcId!) { editBillingAmount(id: $id, amount: {value: 1, currency: "
        "\"EUR\"}) { id } }", {"id": rate["id"]})
    assert message.startswith('Invalid argument "id"')


async def test_cost_operations_by_a_role_granted_the_permission(org: Org) -> None:
    manager = await org.add_member("Max", role="manager")
    role_id = (await manager.gql("query { currentPerson { role { id } } }"))["currentPerson"][
        "role"]["id"]
    await org.admin.gql(
        "mutation($id: SvcId!) { editRoleAuthorisations(id: $id, authorisations: "
        "[{name: \"billingRates\", manage: [\"all\"]}]) { id } }", {"id": role_id})
    tag = await add_tag(org, "Crew")
    cost = await add_rate(manager, "Tag", "Cost", entity=("tagId", tag), t="persons")
    cid = cost["id"]
    gql = manager.gql
    for field, argument, type_, value, check in [
        ("StartTime", "startTime", "SvcTimestamp!", MAR, lambda r: r["startTime"]["ts"] == MAR),
        ("Amount", "amount", "SvcInputAmount!", eur(4200), lambda r: r["amount"] == eur(4200)),
        ("SplitType", "splitType", "SvcRateSplitType", "projects",
         lambda r: r["splitType"] == "projects"),
        ("SplitType", "splitType", "SvcRateSplitType", None, lambda r: r["splitType"] is None),
        ("Method", "method", "SvcRateMethod!", "fixed", lambda r: r["method"] == "fixed"),
        ("RepeatEnabled", "enabled", "Boolean!", True, lambda r: r["repeatEnabled"]),
        ("RepeatOccurrence", "occurrence", "SvcRateRepeatOccurrence!", "year",
         lambda r: r["repeat"]["occurrence"] == "year"),
        ("RepeatFrequency", "frequency", "Int!", 3, lambda r: r["repeat"]["frequency"] == 3),
        ("RepeatWeekPattern", "weekPattern", "SvcRateRepeatWeekPattern", [1],
         lambda r: r["repeat"]["weekPattern"] == [1]),
        ("RepeatMonthPattern", "monthPattern", "SvcRateMonthPattern", "firstDay",
         lambda r: r["repeat"]["monthPattern"] == "firstDay"),
        ("RepeatEndTime", "endTime", "SvcTimestamp", None,
         lambda r: r["repeat"]["endTimeEnabled"] is False),
    ]:
        query = (f"mutation($id: SvcId!, $v: {type_}) {{ editCost{field}(id: $id, "
                 f"{argument}: $v) {{ {RATE} }} }}")
        result = (await gql(query, {"id": cid, "v": value}))[f"editCost{field}"]
        assert result["type"] == "cost" and check(result), field
    await gql("mutation($id: SvcId!) { editCostRepeatEnabled(id: $id, enabled: false) { id } "
              "editCostMethod(id: $id, method: \"hourly\") { id } "
              "editCostSplitType(id: $id, splitType: \"persons\") { id } }", {"id": cid})
    rows = await gql(
        "mutation($r: SvcId!, $e: SvcId!) { addCostSplit(rateId: $r, entityId: $e, amount: "
        "{value: 7, currency: \"EUR\"}, nonBillable: false) { id } editCostSplitAmount(rateId: $r,"
        " entityId: $e, amount: {value: 8, currency: \"EUR\"}) { id } editCostSplitNonBillable("
        "rateId: $r, entityId: $e, nonBillable: true) { personSplit { amount { value } "
        "nonBillable } } }", {"r": cid, "e": manager.id})
    assert rows["editCostSplitNonBillable"]["personSplit"] == [
        {"amount": {"value": 8}, "nonBillable": True}]
    removed = await gql(
        "mutation($r: SvcId!, $e: SvcId!) { removeCostSplit(rateId: $r, entityId: $e) "
        "{ personSplit { nonBillable } } }", {"r": cid, "e": manager.id})
    assert removed["removeCostSplit"]["personSplit"] == []
    copy = (await gql("mutation($t: SvcId!, $c: SvcId!) { duplicateTagCost(tagId: $t, costId: $c)"
                      " { id } }", {"t": tag, "c": cid}))["duplicateTagCost"]
    await gql("mutation($t: SvcId!, $c: SvcId!) { deleteTagCost(tagId: $t, costId: $c) { id } }",
              {"t": tag, "c": copy["id"]})
    listed = await gql("query($t: SvcId!) { getTag(id: $t) { costs { value { id } } } }",
                       {"t": tag})
    assert listed["getTag"]["costs"]["value"] == [{"id": cid}]
