"""Project budgets: add / delete / duplicate on a project, edit the billing amount, the cost
amount and the quantity; `SvcProject.budgets`. Amounts are money: seeing and editing budgets
needs the Billing rates permission (service/rates_store.py)."""

from __future__ import annotations

from typing import Any

from ariadne import MutationType, ObjectType
from sqlalchemy import select

from service.errors import BadInput, NotFound
from service.graphql.context import RequestContext
from service.graphql.fastpath import plain
from service.lookup import get_in_org
from service.models import Project
from service.models.budget import Budget
from service.rates_store import check_amount, require_manage_rates, require_view_rates

mutation = MutationType()
budget_type = ObjectType("SvcBudget")
project_type = ObjectType("SvcProject")

SPLIT_TYPES = ("persons", "projects")


def _quantity(value: Any) -> int:
    if not isinstance(value, int) or not 0 <= value <= 10**12:
        raise BadInput("quantity", "must be a whole non-negative number")
    return value


async def _budget(context: RequestContext, budget_id: str, argument: str = "id") -> Budget:
    await require_manage_rates(context)
    return await get_in_org(context.session, Budget, context.org_id, budget_id, argument,
                            "budget", for_update=True)


async def _project_budget(context: RequestContext, project_id: str, budget_id: str) -> Budget:
    await require_manage_rates(context)
    project = await get_in_org(context.session, Project, context.org_id, project_id,
                               "projectId", "project")
    budget = await _budget(context, budget_id, "budgetId")
    if budget.project_id != project.id:
        raise NotFound("budgetId", budget_id, "budget of this project")
    return budget


@mutation.field("addProjectBudget")
async def resolve_add_project_budget(
    _root: Any, info: Any, projectId: str, billingAmount: dict[str, Any],
    costAmount: dict[str, Any], quantity: int, splitType: str | None = None,
) -> Budget:
    context: RequestContext = info.context
    await require_manage_rates(context)
    project = await get_in_org(context.session, Project, context.org_id, projectId,
                               "projectId", "project")
    billing = check_amount(billingAmount, "billingAmount")
    cost = check_amount(costAmount, "costAmount")
    if splitType is not None and splitType not in SPLIT_TYPES:
        raise BadInput("splitType", f"must be one of {', '.join(SPLIT_TYPES)} or null")
    budget = Budget(
        organisation_id=context.org_id, project_id=project.id, billing_value=billing[0],
        billing_currency=billing[1], cost_value=cost[0], cost_currency=cost[1],
        quantity=_quantity(quantity), split_type=splitType, created_ms=context.now_ms,
    )
    context.session.add(budget)
    return budget


@mutation.field("deleteProjectBudget")
async def resolve_delete_project_budget(
    _root: Any, info: Any, projectId: str, budgetId: str
) -> Budget:
    budget = await _project_budget(info.context, projectId, budgetId)
    await info.context.session.delete(budget)
    return budget


@mutation.field("duplicateProjectBudget")
async def resolve_duplicate_project_budget(
    _root: Any, info: Any, projectId: str, budgetId: str
) -> Budget:
    context: RequestContext = info.context
    budget = await _project_budget(context, projectId, budgetId)
    copy = Budget(
        organisation_id=context.org_id, project_id=budget.project_id,
        billing_value=budget.billing_value, billing_currency=budget.billing_currency,
        cost_value=budget.cost_value, cost_currency=budget.cost_currency,
        quantity=budget.quantity, split_type=budget.split_type, created_ms=context.now_ms,
    )
    context.session.add(copy)
    return copy


@mutation.field("editBudgetBillingAmount")
async def resolve_edit_budget_billing(_root: Any, info: Any, id: str,
                                      amount: dict[str, Any]) -> Budget:
    budget = await _budget(info.context, id)
    budget.billing_value, budget.billing_currency = check_amount(amount)
    return budget


@mutation.field("editBudgetCostAmount")
async def resolve_edit_budget_cost(_root: Any, info: Any, id: str,
                                   amount: dict[str, Any]) -> Budget:
    budget = await _budget(info.context, id)
    budget.cost_value, budget.cost_currency = check_amount(amount)
    return budget


@mutation.field("editBudgetQuantity")
async def resolve_edit_budget_quantity(_root: Any, info: Any, id: str, quantity: int) -> Budget:
    budget = await _budget(info.context, id)
    budget.quantity = _quantity(quantity)
    return budget


@project_type.field("budgets")
async def resolve_project_budgets(project: Project, info: Any) -> list[Budget]:
    context: RequestContext = info.context
    await require_view_rates(context)
    rows = await context.session.scalars(
        select(Budget)
        .where(Budget.organisation_id == context.org_id, Budget.project_id == project.id)
        .order_by(Budget.id)
    )
    return list(rows)


budget_type.set_field("billingAmount", plain(
    lambda b, _info: {"value": b.billing_value, "currency": b.billing_currency}))
budget_type.set_field("costAmount", plain(
    lambda b, _info: {"value": b.cost_value, "currency": b.cost_currency}))
budget_type.set_field("splitType", plain(lambda b, _info: b.split_type))

BINDABLES = [mutation, budget_type, project_type]
