"""The Slack workspaces as timebot's database records them (`slack_workspaces`, written by
bot/slack/workspace.py), read and told for the operator: `timebot slack status`, and a warning in
`timebot people list` while one is uninstalled."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from timebot.state.models import SlackWorkspace


@dataclass(frozen=True)
class WorkspaceRecord:
    team_id: str
    enterprise_id: str | None
    organisation_id: str | None
    uninstalled_ms: int | None
    uninstalled_reason: str | None

    @property
    def active(self) -> bool:
        return self.uninstalled_ms is None


def record_of(row: SlackWorkspace) -> WorkspaceRecord:
    return WorkspaceRecord(row.team_id, row.enterprise_id, row.organisation_id,
                           row.uninstalled_ms, row.uninstalled_reason)


async def workspace_records(
    sessions: async_sessionmaker[AsyncSession],
) -> list[WorkspaceRecord]:
    async with sessions() as session:
        rows = await session.scalars(select(SlackWorkspace).order_by(SlackWorkspace.team_id))
        return [record_of(row) for row in rows]


async def records_by_token(
    sessions: async_sessionmaker[AsyncSession],
) -> dict[str, WorkspaceRecord]:
    """Every workspace recorded, by its token's hash: one read for every installation's bot
    (bot.slack.installations)."""
    async with sessions() as session:
        rows = await session.scalars(select(SlackWorkspace).where(
            SlackWorkspace.token_hash.is_not(None)))
        return {str(row.token_hash): record_of(row) for row in rows}


def status_line(record: WorkspaceRecord) -> str:
    serves = (f"serves organisation {record.organisation_id}" if record.organisation_id
              else "serves no organisation yet")
    if record.active:
        return f"Slack: workspace {record.team_id} installed, {serves}"
    since = datetime.fromtimestamp((record.uninstalled_ms or 0) / 1000, UTC)
    return (f"Slack: uninstalled since {since:%Y-%m-%d %H:%M} UTC ({record.uninstalled_reason})"
            f" — workspace {record.team_id}, {serves}; nothing is sent in Slack until it is "
            "installed again")


def status_lines(records: list[WorkspaceRecord]) -> list[str]:
    if not records:
        return ["Slack: no workspace known (SLACK_BOT_TOKEN unset, or Slack not reached yet)"]
    return [status_line(record) for record in records]
