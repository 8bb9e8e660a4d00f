"""The organisations of a hosted service that timebot serves
(timebot/directory/organisations.py)."""

from __future__ import annotations

from sqlalchemy import BigInteger, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from timebot.state.models import StateBase


class HostedOrganisation(StateBase):
    """An organisation of a hosted service registered by `timebot orgs add` (#27): its name as
    `currentOrganisation` answered and its integration key, sealed with TIMEBOT_SECRET_KEY."""

    __tablename__ = "hosted_organisations"

    organisation_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    integration_key_sealed: Mapped[str] = mapped_column(Text)
    added_ms: Mapped[int] = mapped_column(BigInteger)
    updated_ms: Mapped[int] = mapped_column(BigInteger)
