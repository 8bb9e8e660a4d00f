"""Project budgets (SvcBudget): a billing amount, a cost amount and a quantity, in the
currency's smallest unit like every amount."""

from __future__ import annotations

from sqlalchemy import BigInteger, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from service.models.base import Base, OrgScoped, id_column


class Budget(OrgScoped, Base):
    __tablename__ = "budgets"

    id: Mapped[str] = id_column()
    project_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    billing_value: Mapped[int] = mapped_column(BigInteger)
    billing_currency: Mapped[str] = mapped_column(String(3))
    cost_value: Mapped[int] = mapped_column(BigInteger)
    cost_currency: Mapped[str] = mapped_column(String(3))
    quantity: Mapped[int] = mapped_column(BigInteger)
    # persons, projects (None: not split)
    split_type: Mapped[str | None] = mapped_column(String(16), nullable=True)
    created_ms: Mapped[int] = mapped_column(BigInteger)
