"""The tenant: an organisation, and its account-wide settings."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, String
from sqlalchemy.orm import Mapped, mapped_column

from service.model_base import Base, id_column

# What a custom OpenID client secret reads as once stored (GraphQL and the account page alike);
# sent back unchanged, it keeps the stored secret.
SECRET_MASK = "********"


class Organisation(Base):
    __tablename__ = "organisations"

    id: Mapped[str] = id_column()
    name: Mapped[str] = mapped_column(String(255))
    color: Mapped[str | None] = mapped_column(String(32), nullable=True)
    locked: Mapped[bool] = mapped_column(Boolean, default=False)
    # Subscription: an inactive account refuses API-key requests with HTTP 402.
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    currency: Mapped[str] = mapped_column(String(3), default="EUR")
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    # Legacy interface: the account setting "Enable/Disable API calls".
    api_enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    # SSO settings as stored by editGoogleSSO / editMicrosoftSSO / editCustomSSO.
    sso: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # Other account settings (timesheet rules, reminders, ...), keyed by name.
    settings: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_ms: Mapped[int] = mapped_column(BigInteger)
    # scheduleOrganisationDeletion: when the grace period ends (then every row is purged) and
    # which administrator asked; both None while the account is not scheduled for deletion.
    deletion_due_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    deletion_by_id: Mapped[str | None] = mapped_column(String(24), nullable=True)
