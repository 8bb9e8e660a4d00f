"""Query.tookOverBy: in a browser session where an administrator acts as another person
(startTakeover), that administrator; otherwise (their own session, an API key) null."""

from __future__ import annotations

from typing import Any

from ariadne import QueryType

from service.graphql.context import RequestContext
from service.models import Person

query = QueryType()


@query.field("tookOverBy")
def resolve_took_over_by(_root: Any, info: Any) -> Person | None:
    context: RequestContext = info.context
    return None if context.signed_in is None else context.signed_in.took_over_by


BINDABLES = [query]
