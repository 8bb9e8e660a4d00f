"""An organisation's expense type as the expense resolvers find it: by id, refused when it
belongs to another organisation or, where a record is to use it, when it is archived."""

from __future__ import annotations

from service.errors import BadInput
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import ExpenseType


async def expense_type_in_org(
    context: RequestContext, type_id: str, argument: str = "id", active: bool = False
) -> ExpenseType:
    found = await get_in_org(
        context.session, ExpenseType, context.org_id, type_id, argument, "expense type"
    )
    if active and found.archived:
        raise BadInput(argument, f"the expense type {found.name!r} is archived")
    return found
