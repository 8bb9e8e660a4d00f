"""The mail queues of the bot's own database: inbound messages, outbound messages, and the IMAP
messages seen."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from plumbing.ids import new_id
from timebot.state.base import StateBase
from timebot.state.lanes import lane_column
from timebot.state.leased_row import LeasedRow


class InboxMessage(LeasedRow, StateBase):
    """A raw inbound message, committed before the SMTP/LMTP `250` (or the IMAP flag), then
    processed by a worker that claims it with a lease. `message_key` (the Message-ID, or a
    hash of the raw message) makes the same mail delivered twice one row. `headers_trusted`:
    whether its Authentication-Results may count (False when it came over SMTP/LMTP from a peer
    outside TIMEBOT_MAIL_TRUSTED_NETWORKS)."""

    __tablename__ = "inbox_messages"
    __table_args__ = (
        Index("ix_inbox_messages_status", "status", "received_ms"),
        Index("ix_inbox_messages_lane", "lane", "received_ms"),
    )

    message_key: Mapped[str] = mapped_column(String(400), unique=True)
    source: Mapped[str] = mapped_column(String(8))
    mail_from: Mapped[str] = mapped_column(String(320), default="")
    rcpt_tos: Mapped[list[str]] = mapped_column(JSON, default=list)
    raw: Mapped[bytes] = mapped_column(LargeBinary)
    headers_trusted: Mapped[bool] = mapped_column(Boolean, default=True)
    # One sender's messages to one address are processed in the order they came, across
    # workers and processes (`mail.queues.inbox.inbox_lane`); NULL: no order kept.
    lane: Mapped[str | None] = mapped_column(String(64), nullable=True)
    received_ms: Mapped[int] = mapped_column(BigInteger)
    # Failures of the message's own (not the service or a database being unreachable): after
    # a few it is set aside (failed). `next_attempt_ms`: when a failed message is tried again.
    failures: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    next_attempt_ms: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    outcome: Mapped[str | None] = mapped_column(Text, nullable=True)
    processed_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


class OutboxMessage(LeasedRow, StateBase):
    """A message to send, kept until the relay (or the local Maildir) has it. `dedupe_key`
    makes a scheduled mail (a review request, a reminder) go out once even when several
    timebot processes schedule it."""

    __tablename__ = "outbox_messages"
    __table_args__ = (
        Index("ix_outbox_messages_due", "status", "next_attempt_ms"),
        Index("ix_outbox_messages_claim", "status", "priority", "next_attempt_ms"),
    )

    message_id: Mapped[str] = mapped_column(String(400))
    dedupe_key: Mapped[str | None] = mapped_column(String(400), unique=True, nullable=True)
    kind: Mapped[str] = mapped_column(String(32))
    # INTERACTIVE (a person who just acted waits for it) or BULK (fan-outs, reminders,
    # digests): claimed in that order (timebot.state.lanes). Rows written by a release that
    # knows no priority are interactive (the server default).
    priority: Mapped[int] = lane_column()
    envelope_from: Mapped[str] = mapped_column(String(320), default="")
    rcpt_tos: Mapped[list[str]] = mapped_column(JSON, default=list)
    subject: Mapped[str] = mapped_column(Text, default="")
    raw: Mapped[bytes] = mapped_column(LargeBinary)
    # Failures of the message's own (not a relay outage): after a few it is set aside (failed).
    failures: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    next_attempt_ms: Mapped[int] = mapped_column(BigInteger)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_ms: Mapped[int] = mapped_column(BigInteger)
    sent_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    # When the last relay exchange began (recorded before it): a row taken over with this set
    # may have reached the relay already.
    attempted_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


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
