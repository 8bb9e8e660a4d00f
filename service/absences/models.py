"""Time off: absence types, accrual settings per absence type and allowances (absence quotas).

An allowance belongs to the organisation, a tag or a person (`tag_id` / `person_id`, both
empty for the organisation). Amounts are in the absence type's unit (days or hours).
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Boolean, Float, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from service.model_base import Base, OrgScoped, id_column

ABSENCE_UNIT_DAY = "day"
ABSENCE_UNIT_HOUR = "hour"


class AbsenceType(OrgScoped, Base):
    __tablename__ = "absence_types"

    id: Mapped[str] = id_column()
    name: Mapped[str] = mapped_column(String(255))
    unit: Mapped[str] = mapped_column(String(8), default=ABSENCE_UNIT_DAY)
    involve_costs: Mapped[bool] = mapped_column(Boolean, default=False)
    color: Mapped[str | None] = mapped_column(String(32), nullable=True)
    archived: Mapped[bool] = mapped_column(Boolean, default=False)


class AbsenceAccrual(OrgScoped, Base):
    """Accrual settings of one absence type; absent row = the defaults (disabled)."""

    __tablename__ = "absence_accruals"

    absence_type_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("absence_types.id", ondelete="CASCADE"), primary_key=True
    )
    is_enabled: Mapped[bool] = mapped_column(Boolean, default=False)
    periodicity: Mapped[str] = mapped_column(String(16), default="monthly")
    period_start_day: Mapped[int] = mapped_column(Integer, default=1)
    awarded: Mapped[str] = mapped_column(String(24), default="firstDay")
    quantity: Mapped[float] = mapped_column(Float, default=0.0)
    allow_negative_booking: Mapped[bool] = mapped_column(Boolean, default=False)


class AbsenceQuota(OrgScoped, Base):
    __tablename__ = "absence_quotas"
    __table_args__ = (Index("ix_absence_quotas_org_type", "organisation_id", "absence_type_id"),)

    id: Mapped[str] = id_column()
    absence_type_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("absence_types.id", ondelete="CASCADE")
    )
    tag_id: Mapped[str | None] = mapped_column(
        String(24), ForeignKey("tags.id", ondelete="CASCADE"), nullable=True, index=True
    )
    person_id: Mapped[str | None] = mapped_column(
        String(24), ForeignKey("persons.id", ondelete="CASCADE"), nullable=True, index=True
    )
    start_ms: Mapped[int] = mapped_column(BigInteger)
    end_ms: Mapped[int] = mapped_column(BigInteger)
    available: Mapped[int] = mapped_column(Integer, default=0)
    end_date_extension_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    carry_forward_limit: Mapped[int] = mapped_column(Integer, default=0)
    accrued_correction: Mapped[int] = mapped_column(Integer, default=0)
    allow_negative_balance: Mapped[bool] = mapped_column(Boolean, default=False)
    recurrent: Mapped[bool] = mapped_column(Boolean, default=False)

    absence_type: Mapped[AbsenceType] = relationship(lazy="joined")
