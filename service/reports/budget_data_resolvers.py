"""getProjectBudgetData: budgets beside what is recorded and planned
(service/reports/budget_data.py), with the Billing rates permission, as budgets. Its SDL
stands beside getPlannedVsRealReport's (service/plannings/planning_reports.graphql)."""

from __future__ import annotations

from typing import Any

from ariadne import QueryType

from service.graphql.context import RequestContext
from service.rates import require_view_rates
from service.reports.budget_data import project_budget_data

query = QueryType()


@query.field("getProjectBudgetData")
async def resolve_project_budget_data(
    _root: Any, info: Any, filters: list[Any] | None = None,
    includeArchived: bool | None = None, budgetProjectIds: list[str] | None = None,
) -> dict[str, Any]:
    context: RequestContext = info.context
    await require_view_rates(context)
    return await project_budget_data(context, filters, bool(includeArchived), budgetProjectIds)


BINDABLES = [query]
