"""Tables of the bot's own database."""

from __future__ import annotations

from sqlalchemy import BigInteger, MetaData, String, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from service.ids import new_id
from service.models.base import NAMING


class StateBase(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class PersonLink(StateBase):
    """A person of the service the bot may act for, with their own API key (encrypted).

    source: "linked" (the person or an admin linked the key: `timebot people link`, the Slack
    modal) or "provisioned" (the embedded service issued it on first need)."""

    __tablename__ = "person_links"
    __table_args__ = (
        UniqueConstraint("organisation_id", "person_id", name="uq_person_links_org_person"),
    )

    id: Mapped[str] = mapped_column(String(24), primary_key=True, default=new_id)
    organisation_id: Mapped[str] = mapped_column(String(64), index=True)
    person_id: Mapped[str] = mapped_column(String(64))
    email: Mapped[str] = mapped_column(String(320), index=True)
    name: Mapped[str] = mapped_column(String(255), default="")
    apikey_sealed: Mapped[str] = mapped_column(String(512))
    source: Mapped[str] = mapped_column(String(16))
    slack_user_id: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    created_ms: Mapped[int] = mapped_column(BigInteger)
    updated_ms: Mapped[int] = mapped_column(BigInteger)
