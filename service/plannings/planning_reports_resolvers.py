"""getProjectBudgetData (budgets beside what is recorded and planned: service/budgets/data.py,
Billing rates permission, as budgets) and getPlannedVsRealReport (planned against recorded
hours on tasks: service/plannings/planned_vs_real.py, the Reports permission)."""

from __future__ import annotations

from typing import Any

from ariadne import QueryType

from service.access import permissions
from service.budgets.data import project_budget_data
from service.graphql.context import RequestContext
from service.plannings.planned_vs_real import planned_vs_real
from service.rates.store import require_view_rates

query = QueryType()


@query.field("getProjectBudgetData")
async def resolve_project_budget_data(
    _root: Any, info: Any, filters: list[Any] | None = None,
    includeArchived: bool | None = None, budgetProjectIds: list[str] | None = None,
) -> dict[str, Any]:
    context: RequestContext = info.context
    await require_view_rates(context)
    return await project_budget_data(context, filters, bool(includeArchived), budgetProjectIds)


@query.field("getPlannedVsRealReport")
async def resolve_planned_vs_real(_root: Any, info: Any, **args: Any) -> dict[str, Any]:
    context: RequestContext = info.context
    permissions.require(context, permissions.REPORTS, "run reports", permissions.VIEW)
    return await planned_vs_real(context, args)


BINDABLES = [query]
