"""getPlannedVsRealReport (planned against recorded hours on tasks:
service/plannings/planned_vs_real.py, the Reports permission); getProjectBudgetData, whose SDL
stands beside it, is resolved by service/reports/budget_data_resolvers.py."""

from __future__ import annotations

from typing import Any

from ariadne import QueryType

from service.access import REPORTS, VIEW, require
from service.graphql.context import RequestContext
from service.plannings.planned_vs_real import planned_vs_real

query = QueryType()


@query.field("getPlannedVsRealReport")
async def resolve_planned_vs_real(_root: Any, info: Any, **args: Any) -> dict[str, Any]:
    context: RequestContext = info.context
    require(context, REPORTS, "run reports", VIEW)
    return await planned_vs_real(context, args)


BINDABLES = [query]
