"""A budget's split rows and alerts: its split type (persons or projects; changing it drops
the rows of the other kind), adding and removing a row for a person or a project, editing a
row's billing amount, cost amount or quantity (one table, SPLIT_EDITS), the rows as
`personSplit` / `projectSplit`, and resetting its threshold or over-budget alert (one table,
ALERT_RESETS; service/budgets/alerts.py fires them). Billing rates permission, as budgets."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ariadne import MutationType, ObjectType
from sqlalchemy import delete, select

from service.budgets.models import Budget, BudgetSplit
from service.budgets.store import budget_by_id, check_quantity, check_split_type
from service.errors import BadInput, RuleViolation
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import Person, Project
from service.rates import check_amount, require_view_rates

mutation = MutationType()
budget_type = ObjectType("SvcBudget")

# split type -> (the model of its rows' entities, what it is called)
ENTITIES: dict[str, tuple[type[Person] | type[Project], str]] = {
    "persons": (Person, "person"),
    "projects": (Project, "project"),
}


def _set_amount(billing: bool) -> Callable[[BudgetSplit, Any, str], None]:
    def set_amount(row: BudgetSplit, value: Any, argument: str) -> None:
        amount = check_amount(value, argument)
        if billing:
            row.billing_value, row.billing_currency = amount
        else:
            row.cost_value, row.cost_currency = amount

    return set_amount


def _set_quantity(row: BudgetSplit, value: Any, argument: str) -> None:
    row.quantity = check_quantity(value, argument)


# operation -> (its argument, how it sets the row)
SPLIT_EDITS: dict[str, tuple[str, Callable[[BudgetSplit, Any, str], None]]] = {
    "editBudgetSplitBillingAmount": ("amount", _set_amount(True)),
    "editBudgetSplitCostAmount": ("amount", _set_amount(False)),
    "editBudgetSplitQuantity": ("quantity", _set_quantity),
}

# operation -> the column of the alert it resets
ALERT_RESETS = {
    "resetBudgetThresholdAlert": "threshold_notified_ms",
    "resetBudgetOverBudgetAlert": "over_budget_notified_ms",
}


async def _row(context: RequestContext, budget: Budget, entity_id: str) -> BudgetSplit | None:
    return (await context.session.scalars(select(BudgetSplit).where(
        BudgetSplit.budget_id == budget.id, BudgetSplit.entity_id == entity_id))).first()


async def _existing_row(context: RequestContext, budget: Budget, entity_id: str) -> BudgetSplit:
    row = await _row(context, budget, entity_id)
    if row is None:
        raise BadInput("entityId", f"budget {budget.id} has no split row for {entity_id!r}")
    return row


@mutation.field("editBudgetSplitType")
async def resolve_edit_split_type(_root: Any, info: Any, id: str,
                                  splitType: str | None = None) -> Budget:
    context: RequestContext = info.context
    budget = await budget_by_id(context, id)
    split_type = check_split_type(splitType)
    if split_type != budget.split_type:
        await context.session.execute(delete(BudgetSplit).where(BudgetSplit.budget_id == budget.id))
    budget.split_type = split_type
    return budget


@mutation.field("addBudgetSplit")
async def resolve_add_budget_split(
    _root: Any, info: Any, budgetId: str, entityId: str, billingAmount: dict[str, Any],
    costAmount: dict[str, Any], quantity: int,
) -> Budget:
    context: RequestContext = info.context
    budget = await budget_by_id(context, budgetId, "budgetId")
    if budget.split_type is None:
        raise RuleViolation(f"Budget {budget.id} is not split: set its split type (persons or "
                            "projects) with editBudgetSplitType first")
    model, what = ENTITIES[budget.split_type]
    entity = await get_in_org(context.session, model, context.org_id, entityId, "entityId",
                              f"{what} (the budget is split by {budget.split_type})")
    if await _row(context, budget, entity.id) is not None:
        raise BadInput("entityId", f'budget {budget.id} already has a split row for '
                       f'{what} "{entity.name}"')
    billing = check_amount(billingAmount, "billingAmount")
    cost = check_amount(costAmount, "costAmount")
    context.session.add(BudgetSplit(
        organisation_id=context.org_id, budget_id=budget.id, entity_id=entity.id,
        billing_value=billing[0], billing_currency=billing[1], cost_value=cost[0],
        cost_currency=cost[1], quantity=check_quantity(quantity)))
    return budget


@mutation.field("removeBudgetSplit")
async def resolve_remove_budget_split(_root: Any, info: Any, budgetId: str,
                                      entityId: str) -> Budget:
    context: RequestContext = info.context
    budget = await budget_by_id(context, budgetId, "budgetId")
    await context.session.delete(await _existing_row(context, budget, entityId))
    return budget


def _bind_split_edit(operation: str, argument: str,
                     apply: Callable[[BudgetSplit, Any, str], None]) -> None:
    async def resolve(_root: Any, info: Any, budgetId: str, entityId: str,
                      **values: Any) -> Budget:
        context: RequestContext = info.context
        budget = await budget_by_id(context, budgetId, "budgetId")
        apply(await _existing_row(context, budget, entityId), values[argument], argument)
        return budget

    mutation.set_field(operation, resolve)


def _bind_reset(operation: str, column: str) -> None:
    async def resolve(_root: Any, info: Any, id: str) -> Budget:
        budget = await budget_by_id(info.context, id)
        setattr(budget, column, None)
        return budget

    mutation.set_field(operation, resolve)


for _operation, (_argument, _apply) in SPLIT_EDITS.items():
    _bind_split_edit(_operation, _argument, _apply)
for _operation, _column in ALERT_RESETS.items():
    _bind_reset(_operation, _column)


def _bind_rows(field: str, split_type: str) -> None:
    model, what = ENTITIES[split_type]

    async def resolve(budget: Budget, info: Any) -> list[dict[str, Any]]:
        context: RequestContext = info.context
        await require_view_rates(context)
        if budget.split_type != split_type:
            return []
        rows = list(await context.session.scalars(
            select(BudgetSplit).where(BudgetSplit.budget_id == budget.id)
            .order_by(BudgetSplit.id)))
        found: list[Person | Project] = list(await context.session.scalars(
            select(model).where(model.id.in_([r.entity_id for r in rows]))))
        entities = {e.id: e for e in found}
        return [{
            what: entities[row.entity_id],
            "billingAmount": {"value": row.billing_value, "currency": row.billing_currency},
            "costAmount": {"value": row.cost_value, "currency": row.cost_currency},
            "quantity": row.quantity,
        } for row in rows if row.entity_id in entities]

    budget_type.set_field(field, resolve)


_bind_rows("personSplit", "persons")
_bind_rows("projectSplit", "projects")

BINDABLES = [mutation, budget_type]
