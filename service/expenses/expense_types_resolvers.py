"""Expense types: structure, read by everyone and edited by administrators (an expense type
in use is archived rather than deleted)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ariadne import MutationType, QueryType
from sqlalchemy import func, select

from service.access import EXPENSES, requirer
from service.errors import RuleViolation
from service.expenses.lookup import expense_type_in_org
from service.graphql.context import RequestContext
from service.graphql.filters import filter_clause
from service.lookup import get_many_in_org
from service.models import ExpenseRecord, ExpenseType
from service.structure import (
    active_clause,
    bind_flat_archiving,
    check_unique_ids,
    name_contains,
)
from service.type_options import EXPENSE, copy_options

require_permission = requirer(EXPENSES)

query = QueryType()
mutation = MutationType()


def _expense_types_statement(context: RequestContext, filter: Any, archived: bool | None) -> Any:
    conditions = {
        "id": lambda value: ExpenseType.id == value,
        "notId": lambda value: ExpenseType.id != value,
        "name": lambda value: name_contains(ExpenseType.name, value),
        "archived": lambda value: ExpenseType.archived.is_(bool(value)),
    }
    statement = select(ExpenseType).where(
        ExpenseType.organisation_id == context.org_id, filter_clause(filter, conditions)
    )
    active = active_clause(ExpenseType.archived, archived)
    return statement if active is None else statement.where(active)


@query.field("getExpenseType")
async def resolve_get_expense_type(_root: Any, info: Any, id: str) -> ExpenseType:
    return await expense_type_in_org(info.context, id)


@query.field("getExpenseTypes")
async def resolve_get_expense_types(
    _root: Any, info: Any, filter: Any = None, archived: bool | None = None
) -> list[ExpenseType]:
    context: RequestContext = info.context
    statement = _expense_types_statement(context, filter, archived).order_by(
        func.lower(ExpenseType.name), ExpenseType.id
    )
    return list(await context.session.scalars(statement))


@query.field("countExpenseTypes")
async def resolve_count_expense_types(
    _root: Any, info: Any, filter: Any = None, archived: bool | None = None
) -> int:
    context: RequestContext = info.context
    inner = _expense_types_statement(context, filter, archived).with_only_columns(ExpenseType.id)
    return int(
        await context.session.scalar(select(func.count()).select_from(inner.subquery())) or 0
    )


@mutation.field("addExpenseType")
async def resolve_add_expense_type(
    _root: Any, info: Any, name: str, color: str | None = None
) -> ExpenseType:
    context: RequestContext = info.context
    require_permission(context, "edit expense types")
    created = ExpenseType(organisation_id=context.org_id, name=name, color=color)
    context.session.add(created)
    await context.session.flush()
    return created


@mutation.field("duplicateExpenseType")
async def resolve_duplicate_expense_type(_root: Any, info: Any, id: str, name: str) -> ExpenseType:
    context: RequestContext = info.context
    require_permission(context, "edit expense types")
    original = await expense_type_in_org(context, id)
    created = ExpenseType(organisation_id=context.org_id, name=name, color=original.color)
    context.session.add(created)
    await context.session.flush()
    await copy_options(context.session, EXPENSE, original.id, created.id)
    return created


async def _set_types_archived(
    context: RequestContext, ids: Sequence[str], argument: str, value: bool
) -> list[ExpenseType]:
    require_permission(context, "edit expense types")
    if argument == "ids":
        check_unique_ids(list(ids), "ids")
    types = await get_many_in_org(
        context.session, ExpenseType, context.org_id, ids, argument, "expense type"
    )
    for item in types:
        item.archived = value
    return types


bind_flat_archiving(mutation, _set_types_archived, "ExpenseType")


@mutation.field("deleteExpenseType")
async def resolve_delete_expense_type(_root: Any, info: Any, id: str) -> ExpenseType:
    """Refused while expense records use the type: archive it instead."""
    context: RequestContext = info.context
    require_permission(context, "edit expense types")
    found = await expense_type_in_org(context, id)
    used = int(
        await context.session.scalar(
            select(func.count())
            .select_from(ExpenseRecord)
            .where(
                ExpenseRecord.organisation_id == context.org_id,
                ExpenseRecord.expense_type_id == found.id,
            )
        )
        or 0
    )
    if used:
        raise RuleViolation(
            f"cannot delete the expense type {found.name!r}: {used} expense "
            f"record{'s' if used > 1 else ''} use it; archive it instead"
        )
    await context.session.delete(found)
    return found


@mutation.field("editExpenseTypeName")
async def resolve_edit_expense_type_name(_root: Any, info: Any, id: str, name: str) -> ExpenseType:
    context: RequestContext = info.context
    require_permission(context, "edit expense types")
    found = await expense_type_in_org(context, id)
    found.name = name
    return found


@mutation.field("editExpenseTypeColor")
async def resolve_edit_expense_type_color(
    _root: Any, info: Any, id: str, color: str | None = None
) -> ExpenseType:
    context: RequestContext = info.context
    require_permission(context, "edit expense types")
    found = await expense_type_in_org(context, id)
    found.color = color
    return found


BINDABLES = [query, mutation]
