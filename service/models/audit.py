"""The audit trail: one row per data-changing operation."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from service.model_base import Base, OrgScoped, id_column


class AuditTrail(OrgScoped, Base):
    __tablename__ = "audit_trails"
    __table_args__ = (Index("ix_audit_trails_org_ts", "organisation_id", "timestamp_ms"),)

    id: Mapped[str] = id_column()
    operation_name: Mapped[str] = mapped_column(String(128))
    person_id: Mapped[str] = mapped_column(String(24), index=True)
    timestamp_ms: Mapped[int] = mapped_column(BigInteger)
    # The submitted arguments, new state only: {name: value}.
    arguments: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # Ids the operation's response named (responseMatch), and the id it touched.
    response_id: Mapped[str | None] = mapped_column(String(24), nullable=True, index=True)
    response_ids: Mapped[list[str]] = mapped_column(JSON, default=list)
