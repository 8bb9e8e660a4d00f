"""The options of absence types and expense types, as ONE table: each row is an
`edit<Type><Group><Name>(id, <argument>)` mutation, the column of the options row it writes
(service/type_options/models.py), its pure check (`ValueError` -> `BadInput` naming the
argument) and, where one edit moves others, its own way of applying the value.
`type_options/type_flags_resolvers.py` binds a mutation per row and reads the values back as
the types' fields; adding an option is one row (and its column).

How time off of a type is approved is one of three modes, which the three approval flags of
the reference schema show: `sameAsTimesheet` (the default: it is part of its timesheet,
reviewed by the timesheet's workflow and locked with it), `autoApprove` (approved as soon as
it is recorded: approvers do not review it, a timesheet holding nothing else is approved at
once when submitted; it stays locked with its timesheet) and `noApproval` (no approval at
all: approvers do not review it and its owner records, edits and deletes it whatever the
timesheet's status). Turning one flag on turns the others off; turning `autoApprove` or
`noApproval` off returns to `sameAsTimesheet`. `service/absences/approval.py` applies them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from service.access import EXPENSES, SETTINGS
from service.models import AbsenceType, ExpenseType
from service.type_options.models import AbsenceTypeOptions, ExpenseTypeOptions
from service.value_words import choice_problem

MODE_TIMESHEET = "sameAsTimesheet"
MODE_AUTO = "autoApprove"
MODE_NONE = "noApproval"
MODES = (MODE_TIMESHEET, MODE_AUTO, MODE_NONE)
INTERVALS = ("month", "year")
MAX_MARKUP = 1000


@dataclass(frozen=True)
class Owner:
    """The type whose options a row edits."""

    graphql_type: str
    model: Any
    options: Any
    key: str  # the options row's column naming the type
    what: str
    permission: str


ABSENCE = Owner("SvcAbsenceType", AbsenceType, AbsenceTypeOptions, "absence_type_id",
                "absence type", SETTINGS)
EXPENSE = Owner("SvcExpenseType", ExpenseType, ExpenseTypeOptions, "expense_type_id",
                "expense type", EXPENSES)


def mode_of(options: Any) -> str:
    """The approval mode an options row (None: the defaults) stands for."""
    if options is None:
        return MODE_TIMESHEET
    if options.no_approval:
        return MODE_NONE
    if options.auto_approve:
        return MODE_AUTO
    return MODE_TIMESHEET


def next_mode(current: str, flag: str, on: bool) -> str:
    """The mode after setting one approval flag (pure)."""
    if on:
        return flag
    if flag == MODE_TIMESHEET:
        raise ValueError("time off either follows the timesheet workflow or is approved "
                         "otherwise: set autoApprove or noApproval to true instead")
    return MODE_TIMESHEET if current == flag else current


def _store_mode(options: Any, mode: str) -> None:
    options.same_as_timesheet = mode == MODE_TIMESHEET
    options.auto_approve = mode == MODE_AUTO
    options.no_approval = mode == MODE_NONE


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("must be true or false")
    return value


def _markup(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_MARKUP:
        raise ValueError(f"must be a whole percentage from 0 to {MAX_MARKUP}")
    return value


def _excess(value: Any) -> tuple[int, str] | None:
    """{frequency, interval}: notify when a person takes this time off more than `frequency`
    times in a month or a year; null: never."""
    if value is None:
        return None
    frequency, interval = value.get("frequency"), value.get("interval")
    if isinstance(frequency, bool) or not isinstance(frequency, int) \
            or not 1 <= frequency <= 1000:
        raise ValueError("frequency must be a whole number from 1 to 1000")
    if interval not in INTERVALS:
        raise ValueError(f"interval {choice_problem(INTERVALS, interval)}")
    return frequency, str(interval)


def _approval_apply(flag: str) -> Callable[[Any, Any], None]:
    def apply(options: Any, value: Any) -> None:
        _store_mode(options, next_mode(mode_of(options), flag, value))

    return apply


def _excess_apply(options: Any, value: Any) -> None:
    options.excess_frequency, options.excess_interval = value if value else (None, None)


@dataclass(frozen=True)
class Flag:
    owner: Owner
    mutation: str
    argument: str
    column: str
    check: Callable[[Any], Any]
    apply: Callable[[Any, Any], None] | None = None  # default: setattr(column)


FLAGS: tuple[Flag, ...] = (
    Flag(ABSENCE, "editAbsenceTypeApprovalSameAsTimesheet", "sameAsTimesheet",
         "same_as_timesheet", _boolean, _approval_apply(MODE_TIMESHEET)),
    Flag(ABSENCE, "editAbsenceTypeApprovalAutoApprove", "autoApprove", "auto_approve",
         _boolean, _approval_apply(MODE_AUTO)),
    Flag(ABSENCE, "editAbsenceTypeApprovalNoApproval", "noApproval", "no_approval",
         _boolean, _approval_apply(MODE_NONE)),
    Flag(ABSENCE, "editAbsenceTypeNotificationGoingNegative", "goingNegative",
         "going_negative", _boolean),
    Flag(ABSENCE, "editAbsenceTypeNotificationBookingInAdvanceAccrual",
         "bookingInAdvanceAccrual", "booking_in_advance_accrual", _boolean),
    Flag(ABSENCE, "editAbsenceTypeNotificationExcessOccurrences", "excessOccurrences",
         "excess_frequency", _excess, _excess_apply),
    Flag(EXPENSE, "editExpenseTypeIsCurrency", "isCurrency", "is_currency", _boolean),
    Flag(EXPENSE, "editExpenseTypeMarkup", "markup", "markup", _markup),
    Flag(EXPENSE, "editExpenseTypeIsInBudget", "isInBudget", "is_in_budget", _boolean),
)


def defaults(owner: Owner, type_id: str, org_id: str) -> Any:
    """A new options row holding the defaults (the columns' defaults, set explicitly so that
    the row reads right before it is flushed)."""
    row = owner.options(organisation_id=org_id, **{owner.key: type_id})
    for column in owner.options.__table__.columns:
        if column.default is not None and getattr(row, column.key) is None:
            setattr(row, column.key, column.default.arg)
    return row


def approval(options: Any) -> dict[str, bool]:
    mode = mode_of(options)
    return {MODE_TIMESHEET: mode == MODE_TIMESHEET, MODE_AUTO: mode == MODE_AUTO,
            MODE_NONE: mode == MODE_NONE}


def notification(options: Any) -> dict[str, Any]:
    if options is None:
        return {"goingNegative": False, "bookingInAdvanceAccrual": False,
                "excessOccurrences": None}
    excess = None
    if options.excess_frequency is not None:
        excess = {"frequency": options.excess_frequency, "interval": options.excess_interval}
    return {"goingNegative": bool(options.going_negative),
            "bookingInAdvanceAccrual": bool(options.booking_in_advance_accrual),
            "excessOccurrences": excess}


def expense_options(options: Any) -> dict[str, Any]:
    if options is None:
        return {"isCurrency": True, "markup": 0, "isInBudget": True}
    return {"isCurrency": bool(options.is_currency), "markup": int(options.markup),
            "isInBudget": bool(options.is_in_budget)}


async def copy_options(session: AsyncSession, owner: Owner, source_id: str,
                       target_id: str) -> None:
    """A duplicated type takes its original's options (none stored: the defaults)."""
    source = await session.get(owner.options, (source_id,))
    if source is None:
        return
    copy = owner.options(organisation_id=source.organisation_id, **{owner.key: target_id})
    for column in owner.options.__table__.columns:
        if column.key not in (owner.key, "organisation_id"):
            setattr(copy, column.key, getattr(source, column.key))
    session.add(copy)
