"""The accrual settings of absence types (`absenceType.accrual`, `editAbsenceTypeAccrual…`)
and the scalars they use (SvcPeriodicity, SvcDayOption).

Everyone reads the accrual settings; administrators edit them. The accrual quantity, in the
absence type's unit (days or hours), may be fractional.
"""

from __future__ import annotations

import math
from typing import Any

from ariadne import MutationType, ObjectType, ScalarType
from graphql import GraphQLError

from plumbing.db import insert_ignoring
from service.absences.allowances import accrual_row
from service.absences.models import AbsenceAccrual
from service.absences.time_off_rules import DAY_OPTIONS, PERIODICITIES, start_day_problem
from service.access import SETTINGS, requirer
from service.errors import BadInput
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import AbsenceType
from service.value_words import choice_problem

require_permission = requirer(SETTINGS)

MAX_QUANTITY = 10_000

mutation = MutationType()
absence_type = ObjectType("SvcAbsenceType")
periodicity = ScalarType("SvcPeriodicity")
day_option = ScalarType("SvcDayOption")


def _choice(name: str, allowed: tuple[str, ...]) -> Any:
    def parse(value: Any) -> str:
        if isinstance(value, str) and value in allowed:
            return value
        raise GraphQLError(f"{name} {choice_problem(allowed, value)}")

    def parse_literal(ast: Any, _variables: Any = None) -> str:
        from graphql import value_from_ast_untyped

        return parse(value_from_ast_untyped(ast))

    return parse, parse_literal


for _scalar, _allowed in ((periodicity, PERIODICITIES), (day_option, DAY_OPTIONS)):
    _parse, _literal = _choice(_scalar.name, _allowed)
    _scalar.set_value_parser(_parse)
    _scalar.set_literal_parser(_literal)


@absence_type.field("accrual")
async def resolve_accrual(item: AbsenceType, info: Any) -> dict[str, Any]:
    context: RequestContext = info.context
    row = await accrual_row(context.session, context.org_id, item.id)
    if row is None:
        return {"isEnabled": False, "periodicity": "monthly", "periodStartDay": 1,
                "awarded": "firstDay", "quantity": 0.0, "allowNegativeBooking": False}
    return {"isEnabled": row.is_enabled, "periodicity": row.periodicity,
            "periodStartDay": row.period_start_day, "awarded": row.awarded,
            "quantity": row.quantity, "allowNegativeBooking": row.allow_negative_booking}


async def _accrual_for_edit(context: RequestContext, id: str) -> tuple[AbsenceType, AbsenceAccrual]:
    require_permission(context, "edit the accrual of absence types")
    item = await get_in_org(context.session, AbsenceType, context.org_id, id, "id", "absence type")
    row = await accrual_row(context.session, context.org_id, item.id)
    if row is None:
        # Two first edits at once (another process): the second one's insert is ignored.
        await context.session.execute(
            insert_ignoring(context.session, AbsenceAccrual, ("absence_type_id",)),
            {"absence_type_id": item.id, "organisation_id": context.org_id,
             "is_enabled": False, "periodicity": "monthly", "period_start_day": 1,
             "awarded": "firstDay", "quantity": 0.0, "allow_negative_booking": False},
        )
        row = await accrual_row(context.session, context.org_id, item.id)
        assert row is not None
    return item, row


@mutation.field("editAbsenceTypeAccrualEnabled")
async def resolve_edit_accrual_enabled(_root: Any, info: Any, id: str, isEnabled: bool) -> Any:
    item, row = await _accrual_for_edit(info.context, id)
    row.is_enabled = isEnabled
    return item


@mutation.field("editAbsenceTypeAccrualPeriodicity")
async def resolve_edit_accrual_periodicity(
    _root: Any, info: Any, id: str, periodicity: str
) -> Any:
    item, row = await _accrual_for_edit(info.context, id)
    problem = start_day_problem(periodicity, row.period_start_day)
    if problem:
        raise BadInput("periodicity", f"the periodStartDay {row.period_start_day} {problem}; "
                       "change the periodStartDay first")
    row.periodicity = periodicity
    return item


@mutation.field("editAbsenceTypeAccrualPeriodStartDay")
async def resolve_edit_accrual_start_day(
    _root: Any, info: Any, id: str, periodStartDay: int
) -> Any:
    item, row = await _accrual_for_edit(info.context, id)
    problem = start_day_problem(row.periodicity, periodStartDay)
    if problem:
        raise BadInput("periodStartDay", problem)
    row.period_start_day = periodStartDay
    return item


@mutation.field("editAbsenceTypeAccrualAwarded")
async def resolve_edit_accrual_awarded(_root: Any, info: Any, id: str, awarded: str) -> Any:
    item, row = await _accrual_for_edit(info.context, id)
    row.awarded = awarded
    return item


@mutation.field("editAbsenceTypeAccrualQuantity")
async def resolve_edit_accrual_quantity(_root: Any, info: Any, id: str, quantity: float) -> Any:
    if not math.isfinite(quantity) or not 0 <= quantity <= MAX_QUANTITY:
        raise BadInput("quantity", f"must be a number between 0 and {MAX_QUANTITY}")
    if round(quantity, 4) != quantity:
        raise BadInput("quantity", "must have at most 4 decimals")
    item, row = await _accrual_for_edit(info.context, id)
    row.quantity = quantity
    return item


@mutation.field("editAbsenceTypeAccrualNegativeBooking")
async def resolve_edit_accrual_negative_booking(
    _root: Any, info: Any, id: str, allowNegativeBooking: bool
) -> Any:
    item, row = await _accrual_for_edit(info.context, id)
    row.allow_negative_booking = allowNegativeBooking
    return item


BINDABLES = [mutation, absence_type, periodicity, day_option]
