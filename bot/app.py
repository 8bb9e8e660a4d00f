"""The Slack app: one slack-bolt AsyncApp, its Web API client and the parts that use them.

`SlackBot` holds what every part needs (runtime, bolt app, Web API client, identity, the
rate-limited sender, the command registry). The parts install their listeners on it:
commands (here), approvals, threads, nudges, home. Listeners ack at once; the work runs after
the ack (bolt's default `process_before_response=False`), so a slash command is acknowledged
in milliseconds whatever the service does.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import aiohttp
from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncRespond
from slack_sdk.web.async_client import AsyncWebClient

from bot import time_commands
from bot.commands import CommandContext, CommandRegistry
from bot.dedup import SlackDeduplication
from bot.identity import Identity, NotIdentified, SlackPerson
from bot.sender import SlackSender
from timebot.errors import InvalidCredentials, ServiceRequestError, TimebotError

if TYPE_CHECKING:
    from bot.component import SlackParts
    from timebot.runtime import Runtime

log = logging.getLogger("timebot.slack")

WORK_SLOTS = 4
LINK_CALLBACK = "timebot_link"
LINK_ACTION = "timebot_link_open"

Registrar = Callable[[CommandRegistry], None]


# The modules that add slash sub-commands, each through `register(registry)`; the parts
# installed by bot.component (approvals, nudges: `/timesheet remind|nudges`) add theirs there.
REGISTRARS: tuple[Registrar, ...] = (time_commands.register,)


def web_client(token: str, base_url: str | None) -> AsyncWebClient:
    """The Web API client; TIMEBOT_SLACK_API_URL (tests: a local fake) replaces Slack's."""
    if base_url:
        return AsyncWebClient(token=token, base_url=base_url.rstrip("/") + "/")
    return AsyncWebClient(token=token)


def keep_alive(client: AsyncWebClient) -> None:
    """Give the client one aiohttp session, so that its calls reuse kept-alive connections:
    without one, slack_sdk opens a session (a new TCP and TLS connection) per call. Called in
    the running event loop (a session binds to it)."""
    if client.session is None or client.session.closed:
        client.session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=client.timeout))


async def close_keep_alive(client: AsyncWebClient) -> None:
    if client.session is not None:
        await client.session.close()
        client.session = None


def link_prompt(message: str, can_link: bool) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": message}}
    ]
    if can_link:
        blocks.append({
            "type": "actions",
            "elements": [{
                "type": "button", "action_id": LINK_ACTION,
                "text": {"type": "plain_text", "text": "Link my account"},
            }],
        })
    return blocks


def link_view() -> dict[str, Any]:
    return {
        "type": "modal",
        "callback_id": LINK_CALLBACK,
        "title": {"type": "plain_text", "text": "Link your account"},
        "submit": {"type": "plain_text", "text": "Link"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": (
                "Paste your own API key of the time tracking service. timebot checks it, "
                "stores it encrypted, and acts only as you with it."
            )}},
            {
                "type": "input", "block_id": "apikey",
                "label": {"type": "plain_text", "text": "API key"},
                "element": {"type": "plain_text_input", "action_id": "value"},
            },
        ],
    }


class SlackBot:
    def __init__(
        self,
        runtime: Runtime,
        token: str,
        signing_secret: str | None,
        *,
        api_url: str | None = None,
        organisation_id: str | None = None,
        socket_mode: bool = False,
    ) -> None:
        self.runtime = runtime
        self.client = web_client(token, api_url)
        self.app = AsyncApp(
            client=self.client,
            signing_secret=signing_secret,
            # Socket Mode requests are not signed; HTTP ones always are.
            request_verification_enabled=not socket_mode,
            logger=log,
        )
        # A retried request (slow ack), also after a restart, is taken once.
        self.app.use(SlackDeduplication(runtime.state_sessions, runtime.clock))
        self.identity = Identity(self.client, runtime.directory, organisation_id)
        self.sender = SlackSender(runtime.state_sessions, self.client, runtime.clock)
        self.registry = CommandRegistry()
        # The work after an ack, bounded: a burst queues here instead of crowding the event
        # loop, so acks stay fast (the response_url stays valid for 30 minutes).
        self.work_slots = asyncio.Semaphore(WORK_SLOTS)
        self.parts: SlackParts  # set by bot.component.install_slack
        self._install_commands()

    # --- helpers for the parts ----------------------------------------------------------

    async def person_or_prompt(self, user_id: str, channel_id: str | None) -> SlackPerson | None:
        """The person, or None after telling the user (ephemerally) how to link."""
        try:
            return await self.identity.resolve(user_id)
        except NotIdentified as refusal:
            await self.ephemeral(
                channel_id or user_id, user_id, refusal.message,
                link_prompt(refusal.message, refusal.can_link),
            )
            return None

    async def ephemeral(
        self, channel: str, user: str, text: str, blocks: list[dict[str, Any]] | None = None
    ) -> None:
        """Only `user` sees it; in a DM with the bot the channel is the user's IM."""
        await self.client.chat_postEphemeral(
            channel=channel, user=user, text=text, blocks=blocks or None
        )

    # --- commands -----------------------------------------------------------------------

    def _install_commands(self) -> None:
        for register in REGISTRARS:
            register(self.registry)
        self.registry.add("/timesheet", "link", self._link_command, "link your own API key")
        for command in ("/time", "/timesheet"):
            self.app.command(command)(self._on_command)
        self.app.action(LINK_ACTION)(self._on_link_button)
        self.app.view(LINK_CALLBACK)(self._on_link_submit)

    async def _on_command(
        self, ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond
    ) -> None:
        await ack()
        async with self.work_slots:
            await self._run_command(body, respond)

    async def _run_command(self, body: dict[str, Any], respond: AsyncRespond) -> None:
        command = str(body.get("command", ""))
        text = str(body.get("text", ""))
        user_id = str(body.get("user_id", ""))
        trigger_id = str(body.get("trigger_id", ""))
        found = self.registry.lookup(command, text)
        if found is not None and found[1] == self._link_command:
            await self.client.views_open(trigger_id=trigger_id, view=link_view())
            return
        try:
            person = await self.identity.resolve(user_id)
        except NotIdentified as refusal:
            await respond(
                text=refusal.message, blocks=link_prompt(refusal.message, refusal.can_link),
                response_type="ephemeral",
            )
            return
        if found is None:
            await respond(text=self.registry.help_text(command), response_type="ephemeral")
            return
        subcommand, handler, args = found
        context = CommandContext(
            person, command, subcommand, args, str(body.get("channel_id", "")), trigger_id,
            self.runtime, self.client, respond,
        )
        try:
            await handler(context)
        except InvalidCredentials as error:
            self.identity.forget(user_id)
            await respond(text=f"Your key was refused ({error}): `/timesheet link` it again.",
                          response_type="ephemeral")
        except TimebotError as error:
            log.warning("command failed: %s %s: %s", command, subcommand, error)
            await respond(text=f"That did not work: {error}", response_type="ephemeral")

    async def _link_command(self, context: CommandContext) -> None:
        await context.open_view(link_view())

    async def _on_link_button(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        await self.client.views_open(trigger_id=str(body.get("trigger_id", "")), view=link_view())

    async def _on_link_submit(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        user_id = str((body.get("user") or {}).get("id", ""))
        values = ((body.get("view") or {}).get("state") or {}).get("values") or {}
        apikey = str(((values.get("apikey") or {}).get("value") or {}).get("value") or "")
        if not apikey.strip():
            await ack(response_action="errors", errors={"apikey": "Paste your API key."})
            return
        try:
            person = await self.identity.link(user_id, apikey)
        except InvalidCredentials:
            await ack(response_action="errors", errors={
                "apikey": "The time tracking service does not know this key."})
            return
        except (ServiceRequestError, NotIdentified) as error:
            await ack(response_action="errors", errors={"apikey": str(error)[:150]})
            return
        await ack()
        await self.sender.post(
            user_id, f"Linked: you are {person.name} ({person.email}) in the time tracking "
            "service. I act only as you.", key=None,
        )
