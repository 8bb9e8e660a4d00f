"""The slash-command registry: `/time …` and `/timesheet …`.

One bolt handler per slash command (bot.slack.slash_commands) acks at once, resolves the Slack
user to a person of the service (bot.slack.identity) and looks the first word of the text up in the
registry; the handler then runs with a `CommandContext`. An unknown or unlinked user never
reaches a handler: they get an ephemeral message saying how to link.

How to register (e.g. from bot/slack/time_commands.py)::

    from bot.slack.commands import CommandContext
    from bot.slack.deps import SlackDeps

    async def time_list(ctx: CommandContext) -> None:
        data = await ctx.gql("query { currentPerson { id } }")   # as ctx.person, own key
        await ctx.respond("…")                                   # ephemeral to the caller

    def register(app: AsyncApp, deps: SlackDeps) -> None:
        deps.registry.add("/time", "list", time_list, "list today's entries")
        deps.registry.fallback("/time", time_log)  # "/time 2h @acme fixing" (no sub-command)

A part adds its sub-commands to `deps.registry` in its `register(app, deps)`, which
bot/slack/component.py calls (add yours there).
`ctx.args` is the text after the sub-command (for a fallback: the whole text). `ctx.respond`
posts an ephemeral reply through the command's response_url (text and/or blocks);
`ctx.open_view(view)` opens a modal with the command's trigger_id; `ctx.client` is the Web API
client, `ctx.runtime` the runtime (clock: `ctx.runtime.clock.now_ms()`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.chat.commands import CommandTable
from bot.slack.identity import SlackPerson
from bot.slack.mrkdwn import escape

if TYPE_CHECKING:
    from timebot.runtime import Runtime

Respond = Callable[..., Awaitable[Any]]


@dataclass
class CommandContext:
    """What a command handler gets: who (resolved), what they typed, how to answer."""

    person: SlackPerson
    command: str
    subcommand: str
    args: str
    channel_id: str
    trigger_id: str
    runtime: Runtime
    client: AsyncWebClient
    _respond: Respond

    async def respond(
        self, text: str, blocks: Sequence[Mapping[str, Any]] | None = None
    ) -> None:
        """An ephemeral reply to the caller (only they see it). `text` is plain: the ground's
        texts (entries, names, the service's messages) and the usage lines (`<n>`) are shown
        as typed; `blocks` are the caller's, escaped where they build them."""
        await self._respond(
            text=escape(text), blocks=list(blocks) if blocks else None, response_type="ephemeral",
            replace_original=False,
        )

    async def open_view(self, view: Mapping[str, Any]) -> None:
        await self.client.views_open(trigger_id=self.trigger_id, view=dict(view))

    async def gql(self, query: str, variables: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """GraphQL as the caller, with their own key."""
        return await self.runtime.client.execute(query, variables, apikey=self.person.apikey)


Handler = Callable[[CommandContext], Awaitable[None]]


class CommandRegistry(CommandTable[Handler]):
    """The Slack app's command table (bot.chat.commands): its handlers take a
    `CommandContext`."""
