"""Answers only the clicking or typing user sees: an ephemeral message, or how to link when
the Slack user is no person of the service yet."""

from __future__ import annotations

from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.chat.person import NotIdentified
from bot.slack.deps import SlackDeps
from bot.slack.identity import SlackPerson
from bot.slack.linking import link_prompt
from bot.slack.mrkdwn import escape


async def ephemeral(
    web: AsyncWebClient, channel: str, user: str, text: str,
    blocks: list[dict[str, Any]] | None = None,
) -> None:
    """Only `user` sees it; in a DM with the bot the channel is the user's IM."""
    await web.chat_postEphemeral(channel=channel, user=user, text=text, blocks=blocks or None)


async def person_or_prompt(
    deps: SlackDeps, user_id: str, channel_id: str | None
) -> SlackPerson | None:
    """The person, or None after telling the user (ephemerally) how to link."""
    try:
        return await deps.identity.resolve(user_id)
    except NotIdentified as refusal:
        await ephemeral(
            deps.web, channel_id or user_id, user_id, escape(refusal.message),
            link_prompt(refusal.message, refusal.can_link),
        )
        return None


def action_channel(body: dict[str, Any]) -> str:
    """Where a button was clicked: its channel, else the clicking user's DM."""
    return str((body.get("channel") or {}).get("id", "")) or str(
        (body.get("user") or {}).get("id", ""))
