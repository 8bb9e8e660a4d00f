"""Billing and cost rates (SvcBilling / SvcCost) at the four levels, their split rows and
project budgets' amounts. (The Billing rates permission is a role's: service/access/permissions.py.)

A rate belongs to exactly one of: the organisation (no entity column set), a tag, a project or
a person; deleting that entity deletes its rates. Amounts are integers in the currency's
smallest unit. Split rows name a person, project or tag by id (no foreign key: a row whose
entity is gone is ignored).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    ForeignKey,
    Index,
    Integer,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from service.model_base import Base, OrgScoped, id_column

RATE_BILLING = "billing"
RATE_COST = "cost"


class Rate(OrgScoped, Base):
    __tablename__ = "rates"
    __table_args__ = (Index("ix_rates_org_type", "organisation_id", "type"),)

    id: Mapped[str] = id_column()
    # billing or cost
    type: Mapped[str] = mapped_column(String(8))
    tag_id: Mapped[str | None] = mapped_column(
        String(24), ForeignKey("tags.id", ondelete="CASCADE"), nullable=True, index=True
    )
    project_id: Mapped[str | None] = mapped_column(
        String(24), ForeignKey("projects.id", ondelete="CASCADE"), nullable=True, index=True
    )
    person_id: Mapped[str | None] = mapped_column(
        String(24), ForeignKey("persons.id", ondelete="CASCADE"), nullable=True, index=True
    )
    start_ms: Mapped[int] = mapped_column(BigInteger)
    # hourly, daily, fixed, nonBillable
    method: Mapped[str] = mapped_column(String(16))
    value: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(3))
    # persons, projects, tags (None: not split)
    split_type: Mapped[str | None] = mapped_column(String(16), nullable=True)
    repeat_enabled: Mapped[bool] = mapped_column(Boolean, default=False)
    # day, week, month, year; every `repeat_frequency` of them
    repeat_occurrence: Mapped[str] = mapped_column(String(8), default="month")
    repeat_frequency: Mapped[int] = mapped_column(Integer, default=1)
    repeat_week_pattern: Mapped[Any] = mapped_column(JSON, nullable=True)
    repeat_month_pattern: Mapped[str | None] = mapped_column(String(16), nullable=True)
    # None: do not end
    repeat_end_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    created_ms: Mapped[int] = mapped_column(BigInteger)

    splits: Mapped[list[RateSplit]] = relationship(
        lazy="selectin",
        cascade="all, delete-orphan",
        order_by="RateSplit.position",
        back_populates="rate",
    )

    @property
    def level(self) -> str:
        if self.project_id is not None:
            return "project"
        if self.person_id is not None:
            return "person"
        if self.tag_id is not None:
            return "tag"
        return "organisation"

    @property
    def entity_id(self) -> str:
        return self.project_id or self.person_id or self.tag_id or self.organisation_id


class RateSplit(OrgScoped, Base):
    __tablename__ = "rate_splits"
    __table_args__ = (UniqueConstraint("rate_id", "entity_id", name="uq_rate_splits_rate_entity"),)

    id: Mapped[str] = id_column()
    rate_id: Mapped[str] = mapped_column(String(24), ForeignKey("rates.id", ondelete="CASCADE"))
    entity_id: Mapped[str] = mapped_column(String(24))
    value: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(3))
    non_billable: Mapped[bool] = mapped_column(Boolean, default=False)
    position: Mapped[int] = mapped_column(Integer, default=0)

    rate: Mapped[Rate] = relationship(back_populates="splits")
