"""Report links: SvcReportResult.token (an extension: a link to a saved report's run for its
runner) and getReportResultFromToken, which needs no key (service/reports/links.py)."""

from __future__ import annotations

from typing import Any

from ariadne import ObjectType, QueryType

from service.graphql.context import RequestContext
from service.reports.links import mint, result_from_token

query = QueryType()
result_type = ObjectType("SvcReportResult")


@query.field("getReportResultFromToken")
async def resolve_from_token(_root: Any, info: Any, token: str) -> dict[str, Any]:
    return await result_from_token(info.context, token)


@result_type.field("token")
def resolve_token(result: dict[str, Any], info: Any) -> str | None:
    context: RequestContext = info.context
    link = result.get("link")
    if not link or context.anonymous:
        return None
    report_id, start_ms, end_ms = link
    return mint(context, report_id, start_ms, end_ms)


BINDABLES = [query, result_type]
