"""Interactive sign-in: pending e-mail codes, browser sessions, passkeys.

Neither table stores a secret in the clear: a pending sign-in keeps the SHA-256 digest of its
browser cookie (which names it) and of its 6-digit code; a browser session keeps the digest of
its cookie. A pending sign-in is written even for an address that names nobody (`person_id`
None), so that the answer and the rate limits are the same for every address.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from service.model_base import Base, id_column


class PendingSignin(Base):
    __tablename__ = "pending_signins"
    __table_args__ = (
        Index("ix_pending_signins_email_created", "email", "created_ms"),
        Index("ix_pending_signins_ip_created", "client_ip", "created_ms"),
    )

    id: Mapped[str] = id_column()
    cookie_digest: Mapped[str] = mapped_column(String(64), unique=True)
    code_digest: Mapped[str] = mapped_column(String(64))
    email: Mapped[str] = mapped_column(String(320))
    client_ip: Mapped[str] = mapped_column(String(64))
    # No foreign keys: nothing to point at for an unknown address.
    organisation_id: Mapped[str | None] = mapped_column(String(24), nullable=True)
    person_id: Mapped[str | None] = mapped_column(String(24), nullable=True)
    created_ms: Mapped[int] = mapped_column(BigInteger)
    expires_ms: Mapped[int] = mapped_column(BigInteger)
    wrong_attempts: Mapped[int] = mapped_column(Integer, default=0)
    used_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


class BrowserSession(Base):
    __tablename__ = "browser_sessions"

    id: Mapped[str] = id_column()
    token_digest: Mapped[str] = mapped_column(String(64), unique=True)
    organisation_id: Mapped[str] = mapped_column(String(24), index=True)
    # Whose session it is (the one who signed in) and, during a takeover, as whom it acts.
    owner_id: Mapped[str] = mapped_column(String(24), index=True)
    person_id: Mapped[str] = mapped_column(String(24))
    user_agent: Mapped[str] = mapped_column(String(255), default="")
    client_ip: Mapped[str] = mapped_column(String(64), default="")
    method: Mapped[str] = mapped_column(String(16), default="email")
    created_ms: Mapped[int] = mapped_column(BigInteger)
    expires_ms: Mapped[int] = mapped_column(BigInteger)
    revoked_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


class Passkey(Base):
    """A WebAuthn credential registered from the account page (discoverable: the browser
    offers it without being told whose it is)."""

    __tablename__ = "passkeys"

    id: Mapped[str] = id_column()
    credential_id: Mapped[str] = mapped_column(String(700), unique=True)  # base64url
    organisation_id: Mapped[str] = mapped_column(String(24), index=True)
    person_id: Mapped[str] = mapped_column(String(24), index=True)
    public_key: Mapped[str] = mapped_column(Text)  # base64url of the COSE key
    sign_count: Mapped[int] = mapped_column(BigInteger, default=0)
    created_ms: Mapped[int] = mapped_column(BigInteger)
    last_used_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


class PasskeyChallenge(Base):
    """A WebAuthn challenge waiting for its answer: for a registration, tied to the browser
    session; for a sign-in, to a random cookie of the browser that asked. Single use."""

    __tablename__ = "passkey_challenges"

    id: Mapped[str] = id_column()
    cookie_digest: Mapped[str] = mapped_column(String(64), unique=True)
    purpose: Mapped[str] = mapped_column(String(16))  # "register" | "signin"
    challenge: Mapped[str] = mapped_column(String(128))  # base64url
    person_id: Mapped[str | None] = mapped_column(String(24), nullable=True)
    expires_ms: Mapped[int] = mapped_column(BigInteger, index=True)


class UsedSsoState(Base):
    """The `state` of an OpenID Connect sign-in whose callback was taken (its SHA-256 digest),
    kept until the flow's cookie expires: a second callback with the same state is refused
    (service/pages/oidc_flow.py `consume`)."""

    __tablename__ = "used_sso_states"

    state_digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    expires_ms: Mapped[int] = mapped_column(BigInteger, index=True)
