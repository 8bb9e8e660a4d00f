"""The listeners of `/time` and `/timesheet`: ack at once, then (in a work slot) resolve the
Slack user to a person, look the sub-command up in the registry and run its handler.

An unlinked user never reaches a handler: they get how to link, except for `/timesheet link`,
which opens the link modal for anyone."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncRespond

from bot.chat.person import NotIdentified
from bot.slack.commands import CommandContext
from bot.slack.deps import SlackDeps
from bot.slack.linking import link_command, link_prompt, link_view
from bot.slack.mrkdwn import escape
from timebot.errors import InvalidCredentials, TimebotError

log = logging.getLogger("timebot.slack")


class SlashCommands:
    def __init__(self, deps: SlackDeps) -> None:
        self.deps = deps

    async def on_command(
        self, ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond
    ) -> None:
        await ack()
        async with self.deps.work_slots:
            await self.run(body, respond)

    async def run(self, body: dict[str, Any], respond: AsyncRespond) -> None:
        deps = self.deps
        command = str(body.get("command", ""))
        text = str(body.get("text", ""))
        user_id = str(body.get("user_id", ""))
        trigger_id = str(body.get("trigger_id", ""))
        found = deps.registry.lookup(command, text)
        if found is not None and found[1] == link_command:
            await deps.web.views_open(trigger_id=trigger_id, view=link_view())
            return
        try:
            person = await deps.identity.resolve(user_id)
        except NotIdentified as refusal:
            await respond(
                text=escape(refusal.message), blocks=link_prompt(refusal.message, refusal.can_link),
                response_type="ephemeral",
            )
            return
        if found is None:
            await respond(text=escape(deps.registry.help_text(command)),
                          response_type="ephemeral")
            return
        subcommand, handler, args = found
        context = CommandContext(
            person, command, subcommand, args, str(body.get("channel_id", "")), trigger_id,
            deps.runtime, deps.web, respond,
        )
        try:
            await handler(context)
        except InvalidCredentials as error:
            deps.identity.forget(user_id)
            await respond(text=f"Your key was refused ({escape(error)}): "
                               "`/timesheet link` it again.",
                          response_type="ephemeral")
        except TimebotError as error:
            log.warning("command failed: %s %s: %s", command, subcommand, error)
            await respond(text=f"That did not work: {escape(error)}", response_type="ephemeral")


def register(app: AsyncApp, deps: SlackDeps) -> SlashCommands:
    part = SlashCommands(deps)
    for command in ("/time", "/timesheet"):
        app.command(command)(part.on_command)
    return part
