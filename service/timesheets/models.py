"""Timesheet approvals: timesheets and their approval events, approvals given, Journal messages,
integration webhooks and the durable queue of webhook deliveries.

The approval workflow configuration itself (stages, reminder and edit-rights settings) lives in
the `settings` JSON of the organisation, tags and persons, keyed by name (see
service/organisation/keyed_settings.py).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from plumbing.sql_constants import sql_constant
from service.model_base import Base, OrgScoped, id_column

STATUS_DRAFT = "d"
STATUS_SUBMITTED = "s"
STATUS_APPROVED = "a"
STATUS_REJECTED = "r"
_SUBMITTED_ONLY = text(f"status = '{STATUS_SUBMITTED}'")  # a partial index's predicate
# For comparisons with `status`: as a literal, the partial index is usable and the statement
# is not prepared again at every run (plumbing.sql_constants).
SUBMITTED = sql_constant(STATUS_SUBMITTED)


class Timesheet(OrgScoped, Base):
    """One person's timesheet for one period, as soon as it is first submitted (before that it
    is a draft and has no row). `submit_id` is the current submission's submit event."""

    __tablename__ = "timesheets"
    __table_args__ = (
        UniqueConstraint("organisation_id", "person_id", "start_ms", "end_ms",
                         name="uq_timesheets_period"),
        Index("ix_timesheets_person_period", "organisation_id", "person_id", "start_ms"),
        # The submitted ones only: a query uses it with the literal (approvals.overview).
        Index("ix_timesheets_submitted_period", "organisation_id", "start_ms", "id",
              sqlite_where=_SUBMITTED_ONLY, postgresql_where=_SUBMITTED_ONLY),
    )

    id: Mapped[str] = id_column()
    person_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("persons.id", ondelete="CASCADE")
    )
    start_ms: Mapped[int] = mapped_column(BigInteger)
    end_ms: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(1), default=STATUS_DRAFT)
    # Index of the current stage in `stages` (meaningful while submitted; the last acted
    # stage once approved or rejected).
    stage: Mapped[int] = mapped_column(Integer, default=0)
    submit_id: Mapped[str | None] = mapped_column(String(24), nullable=True)
    # Bumped when the workflow restarts inside one submission (approver edit).
    round: Mapped[int] = mapped_column(Integer, default=0)
    # Resolved at submission: [{type, quorum, required, approvers: [ids], skipped, label}].
    stages: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    # The content at the last submission: {record_id: {fp, projects, task}}.
    snapshot: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    rejected_by_id: Mapped[str | None] = mapped_column(String(24), nullable=True)
    stage_entered_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    reminded_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    updated_ms: Mapped[int] = mapped_column(BigInteger)


class ApprovalEvent(OrgScoped, Base):
    """What happened to a timesheet. A submit event (kind submit / auto_submit) is the handle of
    one submission: its `status` and `stage` follow the submission; approve / reject events
    point to it by `submit_id`."""

    __tablename__ = "approval_events"
    __table_args__ = (
        Index("ix_approval_events_person", "organisation_id", "person_id", "start_ms"),
    )

    id: Mapped[str] = id_column()
    timesheet_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("timesheets.id", ondelete="CASCADE"), index=True
    )
    person_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("persons.id", ondelete="CASCADE")
    )
    start_ms: Mapped[int] = mapped_column(BigInteger)
    end_ms: Mapped[int] = mapped_column(BigInteger)
    kind: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(1))
    stage: Mapped[int] = mapped_column(Integer, default=0)
    ts_ms: Mapped[int] = mapped_column(BigInteger)
    by_id: Mapped[str | None] = mapped_column(String(24), nullable=True)
    comment: Mapped[str | None] = mapped_column(Text, nullable=True)
    submit_id: Mapped[str | None] = mapped_column(String(24), nullable=True, index=True)
    # On submit events: {added: [...], modified: [...], deleted: [...]} since the previous one.
    changes: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    rejected_stage: Mapped[int | None] = mapped_column(Integer, nullable=True)
    system_action: Mapped[str | None] = mapped_column(String(64), nullable=True)


class Approval(OrgScoped, Base):
    """One approver's approval of one stage of one submission (round). The unique constraint
    makes a repeated or concurrent approval by the same person count once."""

    __tablename__ = "approvals"
    __table_args__ = (
        UniqueConstraint("submit_id", "round", "stage", "approver_id",
                         name="uq_approvals_once"),
    )

    id: Mapped[str] = id_column()
    timesheet_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("timesheets.id", ondelete="CASCADE"), index=True
    )
    submit_id: Mapped[str] = mapped_column(String(24), index=True)
    round: Mapped[int] = mapped_column(Integer, default=0)
    stage: Mapped[int] = mapped_column(Integer)
    approver_id: Mapped[str] = mapped_column(String(24))
    ts_ms: Mapped[int] = mapped_column(BigInteger)
    # True when carried over from the previous submission (nothing of theirs changed).
    carried_over: Mapped[bool] = mapped_column(Boolean, default=False)


class JournalMessage(OrgScoped, Base):
    """A Journal message: written by someone (addMessage) or by the workflow (kind set)."""

    __tablename__ = "journal_messages"
    __table_args__ = (Index("ix_journal_messages_org_date", "organisation_id", "date_ms"),)

    id: Mapped[str] = id_column()
    author_id: Mapped[str | None] = mapped_column(String(24), nullable=True, index=True)
    date_ms: Mapped[int] = mapped_column(BigInteger)
    type: Mapped[str] = mapped_column(String(32), default="message")
    content: Mapped[str] = mapped_column(Text)
    reference_id: Mapped[str | None] = mapped_column(String(24), nullable=True, index=True)
    reference_type: Mapped[str | None] = mapped_column(String(32), nullable=True)
    # The thread: messages on one timesheet share its id whatever submit event they name.
    thread_id: Mapped[str | None] = mapped_column(String(24), nullable=True, index=True)
    reply_to_id: Mapped[str | None] = mapped_column(String(24), nullable=True)
    is_pinned: Mapped[bool] = mapped_column(Boolean, default=False)
    # Workflow entries: Submitted for approval, Approved by, Rejected by, Auto-submitted,
    # Auto-approved; and the stage they concern.
    kind: Mapped[str | None] = mapped_column(String(32), nullable=True)
    stage: Mapped[int | None] = mapped_column(Integer, nullable=True)


class MessageMention(OrgScoped, Base):
    __tablename__ = "journal_mentions"
    __table_args__ = (Index("ix_journal_mentions_entity", "entity_id", "message_id"),)

    id: Mapped[str] = id_column()
    message_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("journal_messages.id", ondelete="CASCADE"), index=True
    )
    entity_id: Mapped[str] = mapped_column(String(24))
    entity_type: Mapped[str] = mapped_column(String(32))
    position: Mapped[int] = mapped_column(Integer, default=0)


class IntegrationWebhook(OrgScoped, Base):
    __tablename__ = "integration_webhooks"

    id: Mapped[str] = id_column()
    name: Mapped[str] = mapped_column(String(255))
    url: Mapped[str] = mapped_column(String(2048))
    secret: Mapped[str] = mapped_column(String(128))
    events: Mapped[list[str]] = mapped_column(JSON, default=list)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_ms: Mapped[int] = mapped_column(BigInteger)


DELIVERY_PENDING = "pending"
DELIVERY_DELIVERED = "delivered"
DELIVERY_FAILED = "failed"


class WebhookDelivery(OrgScoped, Base):
    """The durable queue: one row per (webhook, event), written in the same transaction as the
    change it reports, delivered (and retried) by service.webhooks.worker."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (Index("ix_webhook_deliveries_due", "status", "next_attempt_ms"),)

    id: Mapped[str] = id_column()
    webhook_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("integration_webhooks.id", ondelete="CASCADE"), index=True
    )
    event: Mapped[str] = mapped_column(String(64))
    body: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16), default=DELIVERY_PENDING)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_ms: Mapped[int] = mapped_column(BigInteger)
    created_ms: Mapped[int] = mapped_column(BigInteger)
    delivered_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)


class PendingApproval(OrgScoped, Base):
    """Who may act on a submission: one row per (stage, approver) of a submission's round,
    written when the round's stages are resolved (submit, auto-submit, the restart after an
    approver's edit). A row waits for its approver while the timesheet is still submitted with
    that submit id, round and current stage, and the approver has not approved that stage: the
    read of "what waits for me" (service/timesheets/pending.py) joins the timesheet and the
    approvals on the row's index, so approving, rejecting or moving on writes nothing here.
    The rows of the owner's timesheets no longer submitted go at the owner's next submission.
    Approvers are resolved at submission and kept in `Timesheet.stages`: a change of settings
    or people does not change who approves a submission already made, nor these rows."""

    __tablename__ = "pending_approvals"
    __table_args__ = (
        Index("ix_pending_approvals_approver", "organisation_id", "approver_id"),
        Index("ix_pending_approvals_owner", "organisation_id", "owner_id"),
        # Written once however many processes rebuild at once (ON CONFLICT DO NOTHING).
        UniqueConstraint("timesheet_id", "submit_id", "round", "stage", "approver_id",
                         name="uq_pending_approvals_once"),
    )

    id: Mapped[str] = id_column()
    timesheet_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("timesheets.id", ondelete="CASCADE")
    )
    owner_id: Mapped[str] = mapped_column(String(24))
    submit_id: Mapped[str] = mapped_column(String(24))
    round: Mapped[int] = mapped_column(Integer)
    stage: Mapped[int] = mapped_column(Integer)
    approver_id: Mapped[str] = mapped_column(String(24))
