"""runInlineReport: hours and the billing / cost amounts of time records over a period (the
work is in service/reports/inline_report.py)."""

from __future__ import annotations

from typing import Any

from ariadne import QueryType

from plumbing.ids import new_id
from service.access import REPORTS, VIEW, require
from service.graphql.context import RequestContext
from service.reports.inline_report import run_inline_report

query = QueryType()

# An inline report is computed on request and not kept: it "expires" at once but is never
# pending; `expire` says how long a client may reuse it.
REUSE_MS = 60 * 60 * 1000


@query.field("runInlineReport")
async def resolve_run_inline_report(_root: Any, info: Any, **args: Any) -> dict[str, Any]:
    context: RequestContext = info.context
    require(context, REPORTS, "run reports", VIEW)
    result = await run_inline_report(context, args)
    return {"id": new_id(), "expire": context.now_ms + REUSE_MS, "pending": False, **result}


BINDABLES = [query]
