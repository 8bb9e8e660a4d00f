"""Budgets of a project or of a task: add / delete / duplicate on their holder (one table,
HOLDERS, from which the six operations are derived), edit the billing amount, the cost amount
and the quantity; `SvcProject.budgets`, `SvcTask.budgets`. Amounts are money: seeing and
editing budgets needs the Billing rates permission (service/rates/store.py). Split rows and
alerts are in budget_splits.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ariadne import MutationType, ObjectType
from sqlalchemy import select

from service.budgets.alerts import mark_budgets
from service.budgets.models import Budget, BudgetSplit
from service.budgets.store import budget_by_id, check_quantity, check_split_type
from service.errors import NotFound
from service.graphql.context import RequestContext
from service.graphql.fastpath import plain
from service.lookup import get_in_org
from service.models import Project, Task
from service.rates import check_amount, require_manage_rates, require_view_rates

mutation = MutationType()
budget_type = ObjectType("SvcBudget")

@dataclass(frozen=True)
class Holder:
    """What holds budgets: its GraphQL type, model, argument and Budget column."""

    name: str  # Project, Task (the operations' infix)
    model: type[Project] | type[Task]
    argument: str
    column: str
    what: str


HOLDERS = (
    Holder("Project", Project, "projectId", "project_id", "project"),
    Holder("Task", Task, "taskId", "task_id", "task"),
)


def _bind(holder: Holder) -> None:
    async def holder_of(context: RequestContext, holder_id: str) -> Project | Task:
        await require_manage_rates(context)
        return await get_in_org(context.session, holder.model, context.org_id, holder_id,
                                holder.argument, holder.what)

    async def held(context: RequestContext, holder_id: str, budget_id: str) -> Budget:
        owner = await holder_of(context, holder_id)
        budget = await budget_by_id(context, budget_id, "budgetId")
        if getattr(budget, holder.column) != owner.id:
            raise NotFound("budgetId", budget_id, f"budget of this {holder.what}")
        return budget

    async def add(_root: Any, info: Any, billingAmount: dict[str, Any],
                  costAmount: dict[str, Any], quantity: int, splitType: str | None = None,
                  **ids: str) -> Budget:
        context: RequestContext = info.context
        owner = await holder_of(context, ids[holder.argument])
        billing = check_amount(billingAmount, "billingAmount")
        cost = check_amount(costAmount, "costAmount")
        budget = Budget(
            organisation_id=context.org_id, billing_value=billing[0],
            billing_currency=billing[1], cost_value=cost[0], cost_currency=cost[1],
            quantity=check_quantity(quantity), split_type=check_split_type(splitType),
            created_ms=context.now_ms, **{holder.column: owner.id},
        )
        context.session.add(budget)
        mark_budgets(context.organisation)
        return budget

    async def delete(_root: Any, info: Any, budgetId: str, **ids: str) -> Budget:
        budget = await held(info.context, ids[holder.argument], budgetId)
        await info.context.session.delete(budget)
        return budget

    async def duplicate(_root: Any, info: Any, budgetId: str, **ids: str) -> Budget:
        context: RequestContext = info.context
        budget = await held(context, ids[holder.argument], budgetId)
        copy = Budget(
            organisation_id=context.org_id, project_id=budget.project_id,
            task_id=budget.task_id, billing_value=budget.billing_value,
            billing_currency=budget.billing_currency, cost_value=budget.cost_value,
            cost_currency=budget.cost_currency, quantity=budget.quantity,
            split_type=budget.split_type, created_ms=context.now_ms,
        )
        context.session.add(copy)
        await context.session.flush()
        for row in await context.session.scalars(
                select(BudgetSplit).where(BudgetSplit.budget_id == budget.id)):
            context.session.add(BudgetSplit(
                organisation_id=context.org_id, budget_id=copy.id, entity_id=row.entity_id,
                billing_value=row.billing_value, billing_currency=row.billing_currency,
                cost_value=row.cost_value, cost_currency=row.cost_currency,
                quantity=row.quantity))
        return copy

    async def listed(owner: Project | Task, info: Any) -> list[Budget]:
        context: RequestContext = info.context
        await require_view_rates(context)
        rows = await context.session.scalars(
            select(Budget)
            .where(Budget.organisation_id == context.org_id,
                   getattr(Budget, holder.column) == owner.id)
            .order_by(Budget.created_ms, Budget.id)
        )
        return list(rows)

    mutation.set_field(f"add{holder.name}Budget", add)
    mutation.set_field(f"delete{holder.name}Budget", delete)
    mutation.set_field(f"duplicate{holder.name}Budget", duplicate)
    holder_type = ObjectType(f"Svc{holder.name}")
    holder_type.set_field("budgets", listed)
    BINDABLES.append(holder_type)


@mutation.field("editBudgetBillingAmount")
async def resolve_edit_budget_billing(_root: Any, info: Any, id: str,
                                      amount: dict[str, Any]) -> Budget:
    budget = await budget_by_id(info.context, id)
    budget.billing_value, budget.billing_currency = check_amount(amount)
    return budget


@mutation.field("editBudgetCostAmount")
async def resolve_edit_budget_cost(_root: Any, info: Any, id: str,
                                   amount: dict[str, Any]) -> Budget:
    budget = await budget_by_id(info.context, id)
    budget.cost_value, budget.cost_currency = check_amount(amount)
    return budget


@mutation.field("editBudgetQuantity")
async def resolve_edit_budget_quantity(_root: Any, info: Any, id: str, quantity: int) -> Budget:
    budget = await budget_by_id(info.context, id)
    budget.quantity = check_quantity(quantity)
    return budget


budget_type.set_field("billingAmount", plain(
    lambda b, _info: {"value": b.billing_value, "currency": b.billing_currency}))
budget_type.set_field("costAmount", plain(
    lambda b, _info: {"value": b.cost_value, "currency": b.cost_currency}))
budget_type.set_field("splitType", plain(lambda b, _info: b.split_type))
budget_type.set_field("thresholdNotifiedAt", plain(lambda b, _info: b.threshold_notified_ms))
budget_type.set_field("overBudgetNotifiedAt", plain(lambda b, _info: b.over_budget_notified_ms))

BINDABLES: list[Any] = [mutation, budget_type]
for _holder in HOLDERS:
    _bind(_holder)
