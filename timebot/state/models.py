"""Tables of the bot's own database (the mail queues' in `timebot.state.mail_tables`)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from plumbing.ids import new_id
from timebot.state.base import StateBase as StateBase
from timebot.state.chat_queue import ChatSendQueue
from timebot.state.lanes import lane_column
from timebot.state.leased_row import LeasedRow
from timebot.state.mail_tables import ImapMessage as ImapMessage
from timebot.state.mail_tables import InboxMessage as InboxMessage
from timebot.state.mail_tables import OutboxMessage as OutboxMessage


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


class WebhookRegistration(StateBase):
    """timebot's own webhook on an organisation of the service, with its secret (encrypted)."""

    __tablename__ = "webhook_registrations"

    organisation_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    webhook_id: Mapped[str] = mapped_column(String(64))
    url: Mapped[str] = mapped_column(Text)
    secret_sealed: Mapped[str] = mapped_column(String(512))
    created_ms: Mapped[int] = mapped_column(BigInteger)


class ReceivedEvent(LeasedRow, StateBase):
    """An event from the service (webhook delivery, or the approval-state poller), committed
    before the delivery is acknowledged and then dispatched by a worker; the delivery id
    makes a redelivery one row."""

    __tablename__ = "received_events"
    __table_args__ = (
        Index("ix_received_events_status", "status", "received_ms"),
        Index("ix_received_events_claim", "status", "priority", "received_ms"),
    )

    delivery_id: Mapped[str] = mapped_column(String(128), unique=True)
    event: Mapped[str] = mapped_column(String(64))
    organisation_id: Mapped[str] = mapped_column(String(64))
    timestamp_ms: Mapped[int] = mapped_column(BigInteger)
    data: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    received_ms: Mapped[int] = mapped_column(BigInteger)
    # As the inbox's: failures of the event's own, and when a failed event is tried again.
    failures: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    next_attempt_ms: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    outcome: Mapped[str | None] = mapped_column(Text, nullable=True)
    # A decision's outcome (owners' notices, cards settled) before a stage's review requests
    # and reminders (timebot.events.bus.event_priority); a row of a release that knows no
    # lanes is interactive (the server default).
    priority: Mapped[int] = lane_column()


class SlackOutgoing(ChatSendQueue, StateBase):
    """A Slack Web API call to make (chat.postMessage, chat.update, …), kept until Slack took
    it (bot/slack/sender.py paces them within Slack's limits). `ref` names what a posted message
    shows (e.g. an approval request), to update it in place; `channel_id`/`ts` are Slack's
    answer; `team_id` the installation whose token sends it (None: SLACK_BOT_TOKEN's)."""

    __tablename__ = "slack_outgoing"
    __table_args__ = (
        Index("ix_slack_outgoing_due", "status", "next_attempt_ms"),
        Index("ix_slack_outgoing_posted", "channel_id", "ts"),
        Index("ix_slack_outgoing_claim", "status", "priority", "seq"),
        # an installation's request messages not decided yet (bot.slack.approver_nudges)
        Index("ix_slack_outgoing_waiting", "team_id", "settled_ms", "ref"),
    )

    channel: Mapped[str] = mapped_column(String(64))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    channel_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    ts: Mapped[str | None] = mapped_column(String(32), nullable=True)
    team_id: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)


class SlackClaim(StateBase):
    """A decision clicked in Slack, claimed before it is made: the unique key (what is decided,
    by whom) makes a double click, a retry or a second approver's click decide once."""

    __tablename__ = "slack_claims"

    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    slack_user_id: Mapped[str] = mapped_column(String(32))
    created_ms: Mapped[int] = mapped_column(BigInteger)


class SlackWorkspace(StateBase):
    """A Slack workspace (team) the bot is installed in (bot/slack/workspace.py): the organisation
    it serves, its token's hash, since when it is uninstalled (None: installed), and why."""

    __tablename__ = "slack_workspaces"

    team_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    enterprise_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    organisation_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    token_hash: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)
    uninstalled_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    uninstalled_reason: Mapped[str | None] = mapped_column(String(64), nullable=True)
    updated_ms: Mapped[int] = mapped_column(BigInteger)


class SlackReceived(StateBase):
    """A request from Slack already taken (an event's `event_id`, a click's action and
    trigger, a slash command's trigger_id): Slack retries a request whose ack was slow, and
    the retry, also after a restart or in another process, finds this row and changes
    nothing. Rows older than a day are pruned (Slack retries within minutes)."""

    __tablename__ = "slack_received"

    key: Mapped[str] = mapped_column(String(300), primary_key=True)
    received_ms: Mapped[int] = mapped_column(BigInteger, index=True)


class SlackNudgePreference(StateBase):
    """An approver's nudge settings in Slack: off, daily digest, snoozed until; and when
    they were last nudged about what (`nudged`: submit id -> [count, last ms])."""

    __tablename__ = "slack_nudge_preferences"

    organisation_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    person_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    slack_user_id: Mapped[str] = mapped_column(String(32))
    off: Mapped[bool] = mapped_column(default=False)
    digest: Mapped[bool] = mapped_column(default=False)
    snoozed_until_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    nudged: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    last_digest_day: Mapped[str | None] = mapped_column(String(10), nullable=True)
    last_staff_nudge: Mapped[str | None] = mapped_column(String(64), nullable=True)


# --- review requests, one-click links, reminders (mail/outbound/reviews.py, web/links.py) ---------


class NotificationPreference(StateBase):
    """How a person's approval updates arrive: "instant" (one e-mail per review request, the
    default when there is no row) or "digest" (one e-mail a day listing everything waiting)."""

    __tablename__ = "notification_preferences"

    organisation_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    person_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    mode: Mapped[str] = mapped_column(String(12), default="instant")
    updated_ms: Mapped[int] = mapped_column(BigInteger)


class UsedLink(StateBase):
    """A one-click link that was followed: `link_key` names what it acts on (a review link:
    submit event, approver and stage, shared by its Approve and Reject links; a Submit now
    link: person and period). Inserted before acting (status "working"), so that two clicks at
    once act once; `outcome` is what the second click is told."""

    __tablename__ = "used_links"

    link_key: Mapped[str] = mapped_column(String(200), primary_key=True)
    action: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(12), default="working")
    outcome: Mapped[str] = mapped_column(Text, default="")
    used_ms: Mapped[int] = mapped_column(BigInteger)


class ApprovalReminderTally(StateBase):
    """Each approvalReminder event received for a submission's stage, so that the bot can
    remind at increasing intervals (the 1st, 3rd, 6th, 10th… of the service's reminders)."""

    __tablename__ = "approval_reminder_tally"
    __table_args__ = (Index("ix_approval_reminder_tally_stage", "submit_id", "stage"),)

    delivery_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    organisation_id: Mapped[str] = mapped_column(String(64))
    submit_id: Mapped[str] = mapped_column(String(64))
    stage: Mapped[int] = mapped_column(Integer)
    timestamp_ms: Mapped[int] = mapped_column(BigInteger)


class SchedulerLease(StateBase):
    """Which process runs a scheduled job now (several timebot processes share the database):
    the holder renews it; another takes over when it expires."""

    __tablename__ = "scheduler_leases"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    owner: Mapped[str] = mapped_column(String(64))
    until_ms: Mapped[int] = mapped_column(BigInteger)


class SchedulerEpoch(StateBase):
    """When the scheduler first saw an organisation (timebot's first run, or the
    organisation's creation): no period reminder is sent for a period that ended before."""

    __tablename__ = "scheduler_epochs"

    organisation_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    first_seen_ms: Mapped[int] = mapped_column(BigInteger)


class PolledApproval(StateBase):
    """What the approval-state poller last saw of one submitted timesheet (hosted service
    without webhooks): it reports a change as an event, and reminds after N days."""

    __tablename__ = "polled_approvals"

    organisation_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    submit_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    person_id: Mapped[str] = mapped_column(String(64))
    start_ms: Mapped[int] = mapped_column(BigInteger)
    end_ms: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(4))
    stage: Mapped[int] = mapped_column(Integer)
    pending: Mapped[list[str]] = mapped_column(JSON, default=list)
    stage_since_ms: Mapped[int] = mapped_column(BigInteger)
    reminders: Mapped[int] = mapped_column(Integer, default=0)
    seen_ms: Mapped[int] = mapped_column(BigInteger)


class MailReply(StateBase):
    """An approver's reply (by its inbox message key) that timebot is acting on: written before
    the decision is applied with the approver's key, finished when its receipt is queued. After
    a crash between the two, the retry finds it and answers as the first attempt would have
    ("Approved", not "Nothing changed") instead of acting twice."""

    __tablename__ = "mail_replies"

    message_key: Mapped[str] = mapped_column(String(400), primary_key=True)
    organisation_id: Mapped[str] = mapped_column(String(64))
    event_id: Mapped[str] = mapped_column(String(64))
    approver_id: Mapped[str] = mapped_column(String(64))
    stage: Mapped[int] = mapped_column(Integer)
    action: Mapped[str] = mapped_column(String(16))  # approve | reject | comment
    detail: Mapped[str] = mapped_column(Text, default="")  # the reason or the comment
    outcome: Mapped[str | None] = mapped_column(String(32), nullable=True)
    created_ms: Mapped[int] = mapped_column(BigInteger)
    finished_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


class MailErrorReceipt(StateBase):
    """When the last error receipt ("Nothing changed" for a refusal) went to a sender: at most
    one per sender per hour (mail.outbound.receipt_sender.error_receipt_allowed)."""

    __tablename__ = "mail_error_receipts"

    sender: Mapped[str] = mapped_column(String(320), primary_key=True)
    last_sent_ms: Mapped[int] = mapped_column(BigInteger)


class QuickEntry(StateBase):
    """A time record created by quick time entry (`/time` in Slack, a mail to time@),
    remembered for `/time undo`. `source_key` (a mail's inbox id and line) makes a mail
    processed twice create its records once."""

    __tablename__ = "quick_entries"
    __table_args__ = (Index("ix_quick_entries_person", "organisation_id", "person_id",
                            "created_ms"),)

    id: Mapped[str] = mapped_column(String(24), primary_key=True, default=new_id)
    organisation_id: Mapped[str] = mapped_column(String(64))
    person_id: Mapped[str] = mapped_column(String(64))
    record_id: Mapped[str] = mapped_column(String(64))
    reading: Mapped[str] = mapped_column(Text, default="")
    source: Mapped[str] = mapped_column(String(8))
    source_key: Mapped[str | None] = mapped_column(String(200), unique=True, nullable=True)
    created_ms: Mapped[int] = mapped_column(BigInteger)
    undone_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


class QuickListing(StateBase):
    """The numbered list of entries last shown to a person (`/time list`, `/time week`):
    what `/time edit <n>` and `/time delete <n>` refer to."""

    __tablename__ = "quick_listings"

    organisation_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    person_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    record_ids: Mapped[list[str]] = mapped_column(JSON, default=list)
    created_ms: Mapped[int] = mapped_column(BigInteger)
