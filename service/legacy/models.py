"""The legacy interface (v2): personal tokens, external ids and per-person daily usage."""

from __future__ import annotations

import datetime

from sqlalchemy import BigInteger, Date, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from service.model_base import Base, OrgScoped, id_column


class LegacyToken(OrgScoped, Base):
    """One legacy token per person: the user name of HTTP basic authentication."""

    __tablename__ = "legacy_tokens"

    token: Mapped[str] = mapped_column(String(64), primary_key=True)
    person_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("persons.id", ondelete="CASCADE"), unique=True
    )
    created_ms: Mapped[int] = mapped_column(BigInteger)


class LegacyExternalId(OrgScoped, Base):
    """An `xid` supplied at creation; it replaces the entity's id on the legacy interface.

    `kind` is the table of the entity (`projects`, `time_records`, ...): a company and a
    project are both rows of `projects`, so they share one namespace of xids."""

    __tablename__ = "legacy_external_ids"
    __table_args__ = (
        UniqueConstraint("organisation_id", "kind", "xid", name="uq_legacy_external_ids_xid"),
        UniqueConstraint(
            "organisation_id", "kind", "entity_id", name="uq_legacy_external_ids_entity"
        ),
    )

    id: Mapped[str] = id_column()
    kind: Mapped[str] = mapped_column(String(32))
    entity_id: Mapped[str] = mapped_column(String(24))
    xid: Mapped[str] = mapped_column(String(255))
    created_ms: Mapped[int] = mapped_column(BigInteger)


class LegacyUsage(OrgScoped, Base):
    """Requests and bytes one person moved through the legacy interface on one UTC day.

    Incremented with an atomic upsert, so several processes on one database count together."""

    __tablename__ = "legacy_usage"

    person_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("persons.id", ondelete="CASCADE"), primary_key=True
    )
    day: Mapped[datetime.date] = mapped_column(Date, primary_key=True)
    requests: Mapped[int] = mapped_column(Integer, default=0)
    bytes: Mapped[int] = mapped_column(BigInteger, default=0)
