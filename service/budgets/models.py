"""Budgets (SvcBudget) of a project or of a task: a billing amount, a cost amount and a
quantity (hours), in the currency's smallest unit like every amount; split rows per person or
per project (BudgetSplit); and when its alerts last fired (service/budgets/alerts.py)."""

from __future__ import annotations

from sqlalchemy import BigInteger, ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from service.model_base import Base, OrgScoped, id_column


class Budget(OrgScoped, Base):
    __tablename__ = "budgets"

    id: Mapped[str] = id_column()
    # Exactly one of project_id and task_id is set.
    project_id: Mapped[str | None] = mapped_column(
        String(24), ForeignKey("projects.id", ondelete="CASCADE"), index=True, nullable=True
    )
    task_id: Mapped[str | None] = mapped_column(
        String(24), ForeignKey("tasks.id", ondelete="CASCADE"), index=True, nullable=True
    )
    billing_value: Mapped[int] = mapped_column(BigInteger)
    billing_currency: Mapped[str] = mapped_column(String(3))
    cost_value: Mapped[int] = mapped_column(BigInteger)
    cost_currency: Mapped[str] = mapped_column(String(3))
    quantity: Mapped[int] = mapped_column(BigInteger)
    # persons, projects (None: not split)
    split_type: Mapped[str | None] = mapped_column(String(16), nullable=True)
    created_ms: Mapped[int] = mapped_column(BigInteger)
    # When the threshold / over-budget alert fired (None: not since its last reset).
    threshold_notified_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    over_budget_notified_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


class BudgetSplit(OrgScoped, Base):
    """One row of a split budget: the share of a person (split type persons) or of a project
    (split type projects)."""

    __tablename__ = "budget_splits"
    __table_args__ = (UniqueConstraint("budget_id", "entity_id", name="uq_budget_splits_entity"),)

    id: Mapped[str] = id_column()
    budget_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("budgets.id", ondelete="CASCADE"), index=True
    )
    entity_id: Mapped[str] = mapped_column(String(24))
    billing_value: Mapped[int] = mapped_column(BigInteger)
    billing_currency: Mapped[str] = mapped_column(String(3))
    cost_value: Mapped[int] = mapped_column(BigInteger)
    cost_currency: Mapped[str] = mapped_column(String(3))
    quantity: Mapped[int] = mapped_column(BigInteger)
