"""Tables of the bot's own database."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
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


class InboxMessage(StateBase):
    """A raw inbound message, committed before the SMTP/LMTP `250` (or the IMAP flag), then
    processed by a worker that claims it with a lease. `message_key` (the Message-ID, or a
    hash of the raw message) makes the same mail delivered twice one row."""

    __tablename__ = "inbox_messages"
    __table_args__ = (Index("ix_inbox_messages_status", "status", "received_ms"),)

    id: Mapped[str] = mapped_column(String(24), primary_key=True, default=new_id)
    message_key: Mapped[str] = mapped_column(String(400), unique=True)
    source: Mapped[str] = mapped_column(String(8))
    mail_from: Mapped[str] = mapped_column(String(320), default="")
    rcpt_tos: Mapped[list[str]] = mapped_column(JSON, default=list)
    raw: Mapped[bytes] = mapped_column(LargeBinary)
    received_ms: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(12), default="queued")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    lease_owner: Mapped[str | None] = mapped_column(String(64), nullable=True)
    lease_until_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    outcome: Mapped[str | None] = mapped_column(Text, nullable=True)
    processed_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


class OutboxMessage(StateBase):
    """A message to send, kept until the relay (or the local Maildir) has it. `dedupe_key`
    makes a scheduled mail (a review request, a reminder) go out once even when several
    timebot processes schedule it."""

    __tablename__ = "outbox_messages"
    __table_args__ = (Index("ix_outbox_messages_due", "status", "next_attempt_ms"),)

    id: Mapped[str] = mapped_column(String(24), primary_key=True, default=new_id)
    message_id: Mapped[str] = mapped_column(String(400))
    dedupe_key: Mapped[str | None] = mapped_column(String(400), unique=True, nullable=True)
    kind: Mapped[str] = mapped_column(String(32))
    envelope_from: Mapped[str] = mapped_column(String(320), default="")
    rcpt_tos: Mapped[list[str]] = mapped_column(JSON, default=list)
    subject: Mapped[str] = mapped_column(Text, default="")
    raw: Mapped[bytes] = mapped_column(LargeBinary)
    status: Mapped[str] = mapped_column(String(12), default="queued")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_ms: Mapped[int] = mapped_column(BigInteger)
    lease_owner: Mapped[str | None] = mapped_column(String(64), nullable=True)
    lease_until_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_ms: Mapped[int] = mapped_column(BigInteger)
    sent_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


class ImapMessage(StateBase):
    """A message the IMAP poller copied into the inbox, until it is flagged on the server.

    The poller fetches with BODY.PEEK (the message stays unseen) and sets \\Seen only once the
    inbox row is processed, so a message whose processing failed stays unseen."""

    __tablename__ = "imap_messages"
    __table_args__ = (
        UniqueConstraint("mailbox", "uidvalidity", "uid", name="uq_imap_messages_uid"),
    )

    id: Mapped[str] = mapped_column(String(24), primary_key=True, default=new_id)
    mailbox: Mapped[str] = mapped_column(String(255))
    uidvalidity: Mapped[int] = mapped_column(BigInteger)
    uid: Mapped[int] = mapped_column(BigInteger)
    message_key: Mapped[str] = mapped_column(String(400), index=True)
    fetched_ms: Mapped[int] = mapped_column(BigInteger)


class WebhookRegistration(StateBase):
    """timebot's own webhook on an organisation of the service, with its secret (encrypted)."""

    __tablename__ = "webhook_registrations"

    organisation_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    webhook_id: Mapped[str] = mapped_column(String(64))
    url: Mapped[str] = mapped_column(Text)
    secret_sealed: Mapped[str] = mapped_column(String(512))
    created_ms: Mapped[int] = mapped_column(BigInteger)


class ReceivedEvent(StateBase):
    """An event from the service (webhook delivery, or the approval-state poller), committed
    before the delivery is acknowledged and then dispatched by a worker; the delivery id
    makes a redelivery one row."""

    __tablename__ = "received_events"
    __table_args__ = (Index("ix_received_events_status", "status", "received_ms"),)

    id: Mapped[str] = mapped_column(String(24), primary_key=True, default=new_id)
    delivery_id: Mapped[str] = mapped_column(String(128), unique=True)
    event: Mapped[str] = mapped_column(String(64))
    organisation_id: Mapped[str] = mapped_column(String(64))
    timestamp_ms: Mapped[int] = mapped_column(BigInteger)
    data: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    received_ms: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(12), default="queued")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    lease_owner: Mapped[str | None] = mapped_column(String(64), nullable=True)
    lease_until_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    outcome: Mapped[str | None] = mapped_column(Text, nullable=True)
