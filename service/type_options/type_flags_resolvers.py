"""The options of absence and expense types (service/type_options/type_flags.py's table): one
mutation
bound per row, and the fields that read them back (`SvcAbsenceType.approval` /
`notification`, `SvcExpenseType.isCurrency` / `markup` / `isInBudget`). Editing needs the
permission of the type's owner row (Settings for absence types, Expenses for expense types);
everyone reads them."""

from __future__ import annotations

from typing import Any

from ariadne import MutationType, ObjectType

from service.access import require
from service.errors import BadInput
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.type_options import type_flags as table

mutation = MutationType()
absence_type = ObjectType("SvcAbsenceType")
expense_type = ObjectType("SvcExpenseType")


async def options_of(context: RequestContext, owner: table.Owner, type_id: str) -> Any:
    return await context.session.get(owner.options, (type_id,))


def bind(flag: table.Flag) -> None:
    owner = flag.owner

    async def edit(_root: Any, info: Any, id: str, **args: Any) -> Any:
        context: RequestContext = info.context
        require(context, owner.permission, f"edit {owner.what}s")
        item = await get_in_org(context.session, owner.model, context.org_id, id, "id",
                                owner.what)
        try:
            value = flag.check(args.get(flag.argument))
        except ValueError as problem:
            raise BadInput(flag.argument, str(problem)) from None
        options = await options_of(context, owner, item.id)
        if options is None:
            options = table.defaults(owner, item.id, context.org_id)
            context.session.add(options)
        try:
            if flag.apply is not None:
                flag.apply(options, value)
            else:
                setattr(options, flag.column, value)
        except ValueError as problem:
            raise BadInput(flag.argument, str(problem)) from None
        await context.session.flush()
        return item

    mutation.set_field(flag.mutation, edit)


for _flag in table.FLAGS:
    bind(_flag)


@absence_type.field("approval")
async def resolve_approval(item: Any, info: Any) -> dict[str, bool]:
    return table.approval(await options_of(info.context, table.ABSENCE, item.id))


@absence_type.field("notification")
async def resolve_notification(item: Any, info: Any) -> dict[str, Any]:
    return table.notification(await options_of(info.context, table.ABSENCE, item.id))


def _expense_field(name: str) -> Any:
    async def resolve(item: Any, info: Any) -> Any:
        return table.expense_options(await options_of(info.context, table.EXPENSE, item.id))[name]

    return resolve


for _name in ("isCurrency", "markup", "isInBudget"):
    expense_type.set_field(_name, _expense_field(_name))

BINDABLES = [mutation, absence_type, expense_type]
