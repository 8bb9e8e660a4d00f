"""`timebot slack …`: the Slack workspace as timebot's own database records it."""

from __future__ import annotations

import asyncio

import click

from timebot.config import Settings


@click.group()
def slack() -> None:
    """The Slack workspace timebot serves."""


async def _status_lines(settings: Settings) -> list[str]:
    from timebot.state.db import create_engine, migrate, session_factory
    from timebot.state.slack_workspaces import status_lines, workspace_records

    engine = create_engine(settings.database_url)
    try:
        await migrate(engine)
        lines = status_lines(await workspace_records(session_factory(engine)))
    finally:
        await engine.dispose()
    if not settings.slack_bot_token:
        lines.append("SLACK_BOT_TOKEN is not set here: this timebot runs without Slack")
    return lines


@slack.command("status")
@click.pass_obj
def slack_status(settings: Settings) -> None:
    """Whether the app is installed in the workspace (or since when it is uninstalled) and
    which organisation the workspace serves."""
    for line in asyncio.run(_status_lines(settings)):
        click.echo(line)
