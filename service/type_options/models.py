"""Options of absence types and expense types beyond their names: how time off of a type is
approved and when its owner's managers hear of it (`absence_type_options`), and how an expense
type counts (`expense_type_options`). An absent row is the defaults
(service/type_options/type_flags.py)."""

from __future__ import annotations

from sqlalchemy import Boolean, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from service.model_base import Base, OrgScoped


class AbsenceTypeOptions(OrgScoped, Base):
    __tablename__ = "absence_type_options"

    absence_type_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("absence_types.id", ondelete="CASCADE"), primary_key=True
    )
    same_as_timesheet: Mapped[bool] = mapped_column(Boolean, default=True)
    auto_approve: Mapped[bool] = mapped_column(Boolean, default=False)
    no_approval: Mapped[bool] = mapped_column(Boolean, default=False)
    going_negative: Mapped[bool] = mapped_column(Boolean, default=False)
    booking_in_advance_accrual: Mapped[bool] = mapped_column(Boolean, default=False)
    excess_frequency: Mapped[int | None] = mapped_column(Integer, nullable=True)
    excess_interval: Mapped[str | None] = mapped_column(String(8), nullable=True)


class ExpenseTypeOptions(OrgScoped, Base):
    __tablename__ = "expense_type_options"

    expense_type_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("expense_types.id", ondelete="CASCADE"), primary_key=True
    )
    is_currency: Mapped[bool] = mapped_column(Boolean, default=True)
    markup: Mapped[int] = mapped_column(Integer, default=0)
    is_in_budget: Mapped[bool] = mapped_column(Boolean, default=True)
