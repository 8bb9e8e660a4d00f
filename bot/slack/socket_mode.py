"""Socket Mode: Slack's requests come over a websocket that timebot opens (apps.connections.open
with the app-level token, SLACK_APP_TOKEN) instead of POST /slack/events; each envelope is
acknowledged on the socket with its envelope_id.

The client is made when the process starts, not when the app is assembled: slack_sdk's aiohttp
client binds itself to the running event loop when it is constructed, and `create_app` runs
before uvicorn starts the loop (`timebot serve`). Connecting runs in the background: while
Slack is unreachable the client keeps trying, and the rest of timebot (HTTP, mail, the sender's
queue) starts and stops regardless.

An envelope's payload is checked as an HTTP body is (`bot.slack.http_events.check_shape`) before
bolt sees it: one Slack never sends (an identifier with a control character, a field of the
wrong type) is acknowledged, so that it is not delivered again, logged, and handled by no
listener."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import structlog
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

from bot.slack.http_events import Malformed, check_shape

if TYPE_CHECKING:
    from timebot.runtime import Runtime

log = structlog.get_logger("timebot.slack.socket_mode")


class CheckedSocketModeHandler(AsyncSocketModeHandler):
    """bolt's handler, with each envelope's payload checked before it is dispatched."""

    async def handle(self, client: Any, req: SocketModeRequest) -> None:
        try:
            check_shape(req.payload)
        except Malformed as error:
            log.warning("slack_envelope_malformed", reason=str(error), type=req.type)
            await client.send_socket_mode_response(
                SocketModeResponse(envelope_id=req.envelope_id))
            return
        await super().handle(client, req)


class SocketMode:
    def __init__(self, app: AsyncApp, app_token: str) -> None:
        self.app = app
        self.app_token = app_token
        self.handler: AsyncSocketModeHandler | None = None
        self._connecting: asyncio.Task[None] | None = None

    async def start(self, _runtime: Runtime) -> None:
        """Start connecting: a socket URL from apps.connections.open, then the socket."""
        if self.handler is None:
            self.handler = CheckedSocketModeHandler(self.app, self.app_token)
            self._connecting = asyncio.create_task(
                self.handler.connect_async(), name="slack-socket-mode")  # type: ignore[no-untyped-call]

    async def stop(self, _runtime: Runtime) -> None:
        if self._connecting is not None:
            self._connecting.cancel()
            try:
                await self._connecting
            except asyncio.CancelledError:
                pass
            self._connecting = None
        if self.handler is not None:
            await self.handler.close_async()  # type: ignore[no-untyped-call]
            self.handler = None
