"""The `filter` argument: an array of typed objects chained by `following: AND | OR`.

Each object names the fields it matches directly and should set one; when it sets several
they all must match. Object i is joined to object i+1 by object i's `following` (AND when
unset), evaluated left to right: ``((f0 op0 f1) op1 f2) ...``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import and_, or_, true
from sqlalchemy.sql.elements import ColumnElement

from service.errors import BadInput

Condition = Callable[[Any], ColumnElement[bool]]


def filter_clause(
    filters: Sequence[Mapping[str, Any] | None] | None,
    conditions: Mapping[str, Condition],
    argument: str = "filter",
) -> ColumnElement[bool]:
    """SQL condition for a filter array; `conditions` maps each field name to its condition."""
    if not filters:
        return true()
    clause: ColumnElement[bool] | None = None
    pending_op = "AND"
    for index, item in enumerate(filters):
        if item is None:
            raise BadInput(f"{argument}[{index}]", "must be an object, not null")
        parts = []
        for field, value in item.items():
            if field == "following" or value is None:
                continue
            condition = conditions.get(field)
            if condition is None:
                raise BadInput(f"{argument}[{index}].{field}", "this filter field is not supported")
            parts.append(condition(value))
        if not parts:
            raise BadInput(f"{argument}[{index}]", "names no field to match")
        this = parts[0] if len(parts) == 1 else and_(*parts)
        if clause is None:
            clause = this
        else:
            clause = or_(clause, this) if pending_op == "OR" else and_(clause, this)
        pending_op = item.get("following") or "AND"
    assert clause is not None
    return clause
