"""The bot's tables of Slack's OAuth installs (bot/slack/oauth_store.py)."""

from __future__ import annotations

from sqlalchemy import BigInteger, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from timebot.state.models import StateBase


class SlackInstallation(StateBase):
    """The Slack app installed into a workspace through OAuth (bot/slack/oauth_store.py): the one
    organisation it serves and its bot token, sealed with TIMEBOT_SECRET_KEY (the refresh
    token too where token rotation is on). Whether it is installed is its `slack_workspaces`
    row's (app_uninstalled, tokens_revoked, a refused token)."""

    __tablename__ = "slack_installations"

    team_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    enterprise_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    organisation_id: Mapped[str] = mapped_column(String(64), index=True)
    team_name: Mapped[str | None] = mapped_column(String(200), nullable=True)
    app_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    bot_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    bot_user_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    bot_scopes: Mapped[str | None] = mapped_column(Text, nullable=True)
    bot_token_sealed: Mapped[str] = mapped_column(Text)
    bot_refresh_token_sealed: Mapped[str | None] = mapped_column(Text, nullable=True)
    bot_token_expires_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    installer_person_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    installer_slack_user_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    installed_ms: Mapped[int] = mapped_column(BigInteger)
    updated_ms: Mapped[int] = mapped_column(BigInteger)


class SlackOAuthState(StateBase):
    """An OAuth `state` issued by GET /slack/install (bot/slack/oauth_store.py), stored as its hash:
    the organisation and administrator it was issued for, until when, and when it was used
    (once only)."""

    __tablename__ = "slack_oauth_states"

    state_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    organisation_id: Mapped[str] = mapped_column(String(64))
    person_id: Mapped[str] = mapped_column(String(64))
    expires_ms: Mapped[int] = mapped_column(BigInteger, index=True)
    consumed_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
