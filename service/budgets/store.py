"""What the budget resolvers share: a budget looked up for an edit (the Billing rates
permission), and the checks of a quantity and of a split type."""

from __future__ import annotations

from typing import Any

from service.budgets.models import Budget
from service.errors import BadInput
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.rates import require_manage_rates
from service.value_words import described

SPLIT_TYPES = ("persons", "projects")


def check_quantity(value: Any, argument: str = "quantity") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 10**12:
        raise BadInput(argument, "must be a whole non-negative number (hours)")
    return value


def check_split_type(value: Any, argument: str = "splitType") -> str | None:
    if value is not None and value not in SPLIT_TYPES:
        raise BadInput(argument, f"must be one of {', '.join(SPLIT_TYPES)} or null, "
                       f"got {described(value)}")
    return None if value is None else str(value)


async def budget_by_id(context: RequestContext, budget_id: str, argument: str = "id") -> Budget:
    """The budget, for an edit (Billing rates permission, manage)."""
    await require_manage_rates(context)
    return await get_in_org(context.session, Budget, context.org_id, budget_id, argument,
                            "budget", for_update=True)
