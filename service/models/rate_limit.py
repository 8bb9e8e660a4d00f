"""Rate-limited operations counted in the database (`service/rate_limit.py`): one row per
counted call, so that every process behind the database shares the window and a restart
forgets nothing. Rows older than the window are deleted as new ones are counted."""

from __future__ import annotations

from sqlalchemy import BigInteger, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from service.model_base import Base, OrgScoped, id_column


class RateLimitHit(OrgScoped, Base):
    __tablename__ = "rate_limit_hits"
    __table_args__ = (Index("ix_rate_limit_hits_action_scope_at", "action", "scope", "at_ms"),)

    id: Mapped[str] = id_column()
    action: Mapped[str] = mapped_column(String(40))
    # Whose budget the call uses: "organisation", or "person:<id>" for the acting person.
    scope: Mapped[str] = mapped_column(String(40))
    at_ms: Mapped[int] = mapped_column(BigInteger)
