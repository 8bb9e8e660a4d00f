"""Invitations to join an organisation, and sign-ups waiting for their e-mail code.

An invitation names a person an administrator added: its link carries a random token that
only the mail holds (the row keeps the token's SHA-256 digest). It is valid for
`INVITATION_VALID_MS`, used once (`used_ms`), and a newer invitation of the same person
voids it (`voided_ms`). A pending sign-up is a sign-in code's twin: the browser's cookie and
the code are kept as digests, and nothing of the organisation exists until the code is
entered (`service/people/signup.py`).
"""

from __future__ import annotations

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from service.model_base import Base, OrgScoped, id_column


class Invitation(OrgScoped, Base):
    __tablename__ = "invitations"
    __table_args__ = (Index("ix_invitations_person", "person_id", "voided_ms"),)

    id: Mapped[str] = id_column()
    person_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("persons.id", ondelete="CASCADE")
    )
    email: Mapped[str] = mapped_column(String(320))
    token_digest: Mapped[str] = mapped_column(String(64), unique=True)
    invited_by_id: Mapped[str | None] = mapped_column(String(24), nullable=True)
    created_ms: Mapped[int] = mapped_column(BigInteger)
    expires_ms: Mapped[int] = mapped_column(BigInteger)
    used_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    voided_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


class PendingSignup(Base):
    __tablename__ = "pending_signups"
    __table_args__ = (
        Index("ix_pending_signups_email_created", "email", "created_ms"),
        Index("ix_pending_signups_ip_created", "client_ip", "created_ms"),
    )

    id: Mapped[str] = id_column()
    cookie_digest: Mapped[str] = mapped_column(String(64), unique=True)
    code_digest: Mapped[str] = mapped_column(String(64))
    organisation_name: Mapped[str] = mapped_column(String(255))
    name: Mapped[str] = mapped_column(String(255))
    email: Mapped[str] = mapped_column(String(320))
    country: Mapped[str | None] = mapped_column(String(2), nullable=True)
    client_ip: Mapped[str] = mapped_column(String(64))
    created_ms: Mapped[int] = mapped_column(BigInteger)
    expires_ms: Mapped[int] = mapped_column(BigInteger)
    wrong_attempts: Mapped[int] = mapped_column(Integer, default=0)
    used_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    # The organisation the code created (a second `signup` with the same code finds it used).
    organisation_id: Mapped[str | None] = mapped_column(String(24), nullable=True)
