"""The account's life: what outlives a purged organisation, and the mail the service sends.

`RetiredKey` keeps a SHA-256 digest of each API key of a purged organisation (nothing else of
it: no ids, no names), so that such a key is answered `CantFindLinkedOrganisation` rather
than `InvalidKey`. `ServiceMail` is the service's own outgoing mail (account notices); the
process that embeds the service hands each row to its outbound mail once.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from service.model_base import Base, id_column


class RetiredKey(Base):
    __tablename__ = "retired_keys"

    key_digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    retired_ms: Mapped[int] = mapped_column(BigInteger)


class ServiceMail(Base):
    __tablename__ = "service_mail"

    id: Mapped[str] = id_column()
    # None for a sign-up's code: its organisation does not exist yet.
    organisation_id: Mapped[str | None] = mapped_column(
        String(24), ForeignKey("organisations.id", ondelete="CASCADE"), index=True,
        nullable=True,
    )
    to_name: Mapped[str] = mapped_column(String(255))
    to_address: Mapped[str] = mapped_column(String(320))
    subject: Mapped[str] = mapped_column(String(998))
    body: Mapped[str] = mapped_column(Text)
    created_ms: Mapped[int] = mapped_column(BigInteger)
    # Set once the embedding process has put the message in its durable outbox, or has set it
    # aside (failed_ms, last_error: it could not be made into a message, e.g. a name written
    # before names refused control characters).
    handed_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True, index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    next_attempt_ms: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    failed_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
