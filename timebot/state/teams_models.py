"""The bot's tables of Microsoft Teams (bot/teams): the Microsoft 365 tenants organisations
connected, the Teams users matched to people, the durable queue of proactive sends, and the
claims that make a click decide once."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from timebot.state.chat_queue import ChatSendQueue
from timebot.state.models import StateBase


class TeamsTenant(StateBase):
    """A Microsoft 365 tenant an organisation connected by admin consent: one tenant serves one
    organisation (as a Slack workspace does). `service_url`: the Bot Connector Teams names in
    this tenant's verified activities (proactive sends go there only). `removed_at_ms`: since
    when consent was removed or the app uninstalled (None: connected); nothing is sent then."""

    __tablename__ = "teams_tenants"

    tenant_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    organisation_id: Mapped[str] = mapped_column(String(64), unique=True)
    service_url: Mapped[str | None] = mapped_column(String(300), nullable=True)
    consented_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    consented_at_ms: Mapped[int] = mapped_column(BigInteger)
    removed_at_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


class TeamsUser(StateBase):
    """A Teams user matched to a person by Entra ID object id and verified e-mail (never by a
    display name): the Teams user id ("29:…"), the personal conversation with the bot and the
    service URL to reach it — once they wrote to the bot, or once the bot installed itself for
    them through Graph (bot.teams.installs). `removed_at_ms`: since when the user removed the
    bot (never installed for again)."""

    __tablename__ = "teams_users"
    __table_args__ = (Index("ix_teams_users_person", "organisation_id", "person_id"),)

    tenant_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    aad_object_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    organisation_id: Mapped[str] = mapped_column(String(64))
    person_id: Mapped[str] = mapped_column(String(64))
    teams_user_id: Mapped[str] = mapped_column(String(200))
    conversation_id: Mapped[str | None] = mapped_column(String(300), nullable=True)
    service_url: Mapped[str | None] = mapped_column(String(300), nullable=True)
    linked_at_ms: Mapped[int] = mapped_column(BigInteger)
    removed_at_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


class TeamsOutgoing(ChatSendQueue, StateBase):
    """A proactive Teams send, durable until the Bot Connector took it (as `slack_outgoing` is
    for Slack): `method` "send" (a new activity) or "update" (replace `activity_id`'s);
    `activity` the JSON sent; `ref` names what the activity shows (e.g. a review request) to
    update the card later; `activity_id` the connector's answer. Sent only into `tenant_id`'s
    conversation at the service URL recorded for it."""

    __tablename__ = "teams_outgoing"
    __table_args__ = (
        Index("ix_teams_outgoing_due", "status", "next_attempt_ms"),
        Index("ix_teams_outgoing_claim", "status", "priority", "seq"),
        Index("ix_teams_outgoing_posted", "conversation_id", "activity_id"),
        # the review cards not decided yet (bot.teams.nudges)
        Index("ix_teams_outgoing_waiting", "settled_ms", "ref"),
    )

    tenant_id: Mapped[str] = mapped_column(String(64), index=True)
    organisation_id: Mapped[str] = mapped_column(String(64), index=True)
    conversation_id: Mapped[str] = mapped_column(String(300))
    service_url: Mapped[str] = mapped_column(String(300))
    activity: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    activity_id: Mapped[str | None] = mapped_column(String(200), nullable=True)


class TeamsClaim(StateBase):
    """A key taken once: an Action.Execute decision (what is decided, by whom), or an
    activity id already handled (Teams retries an activity whose ack was slow). Rows older
    than a day may be pruned."""

    __tablename__ = "teams_claims"

    key: Mapped[str] = mapped_column(String(300), primary_key=True)
    created_ms: Mapped[int] = mapped_column(BigInteger)


class TeamsNudgePreference(StateBase):
    """An approver's nudges in Teams, set by the controls under a nudge or digest card and by
    `timesheet nudges on|off`: `off` until turned on again, or snoozed until a moment (no row:
    on). `changed_by`: the invoke that set them last (the same invoke again changes nothing)."""

    __tablename__ = "teams_nudge_preferences"

    organisation_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    person_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    off: Mapped[bool] = mapped_column(default=False)
    snoozed_until_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    changed_by: Mapped[str | None] = mapped_column(String(200), nullable=True)
    changed_ms: Mapped[int] = mapped_column(BigInteger)
