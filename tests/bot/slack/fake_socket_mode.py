"""Slack's Socket Mode end on loopback: an aiohttp websocket server. `apps.connections.open` on
the fake Web API (called with the app-level token) answers with its ws:// URL; a connecting app
gets `hello`, then the test pushes envelopes and reads the app's acknowledgements.

    socket = await FakeSocketMode.start(fake)        # fake: the FakeSlack Web API
    await socket.wait_connected()
    envelope_id = await socket.send("slash_commands", command_fields(...))
    ack = await socket.ack(envelope_id)             # {"envelope_id": ..., "payload"?: ...}
    await socket.stop()
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from tests.bot.slack.fake_slack import FakeSlack
from tests.net import free_port

# What each envelope type tells the app (Slack: only slash commands and interactivity may
# carry a response payload in the ack).
ACCEPTS_RESPONSE_PAYLOAD = {"slash_commands": True, "interactive": True, "events_api": False}


@dataclass
class FakeSocketMode:
    port: int
    runner: web.AppRunner | None = None
    sockets: list[web.WebSocketResponse] = field(default_factory=list)
    acks: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Everything the app sent that is not an ack of an envelope we sent (should stay empty).
    unexpected: list[str] = field(default_factory=list)
    sent: set[str] = field(default_factory=set)
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    @classmethod
    async def start(cls, fake: FakeSlack) -> FakeSocketMode:
        socket = cls(free_port())
        app = web.Application()
        app.router.add_get("/link/", socket._socket)
        socket.runner = web.AppRunner(app, access_log=None)
        await socket.runner.setup()
        await web.TCPSite(socket.runner, "127.0.0.1", socket.port).start()
        fake.socket_url = socket.url
        return socket

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/link/?ticket={uuid.uuid4()}"

    async def stop(self) -> None:
        for ws in list(self.sockets):
            await ws.close()
        if self.runner is not None:
            await self.runner.cleanup()

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)  # answers the client's pings
        await ws.prepare(request)
        self.sockets.append(ws)
        await ws.send_json({"type": "hello", "num_connections": len(self.sockets),
                            "debug_info": {"host": "fake-socket-mode"},
                            "connection_info": {"app_id": "A0TIMEBOT"}})
        await self._notify()
        try:
            async for message in ws:
                if message.type != WSMsgType.TEXT:
                    continue
                data = message.json()
                envelope_id = data.get("envelope_id") if isinstance(data, dict) else None
                if envelope_id in self.sent and envelope_id not in self.acks:
                    self.acks[envelope_id] = data
                else:
                    self.unexpected.append(message.data)
                await self._notify()
        finally:
            self.sockets.remove(ws)
            await self._notify()
        return ws

    async def _until(self, ready: Any, what: str, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        async with self._changed:
            while not ready():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"Socket Mode: {what} within {seconds} s")
                try:
                    await asyncio.wait_for(self._changed.wait(), timeout=left)
                except TimeoutError:
                    pass

    async def wait_connected(self, seconds: float = 20.0) -> None:
        await self._until(lambda: bool(self.sockets), "no app connected", seconds)

    async def send(self, kind: str, payload: dict[str, Any]) -> str:
        """Push an envelope (`slash_commands`, `interactive`, `events_api`) to the connected
        app; its envelope_id."""
        await self.wait_connected()
        envelope_id = str(uuid.uuid4())
        envelope: dict[str, Any] = {"envelope_id": envelope_id, "type": kind,
                                    "payload": payload,
                                    "accepts_response_payload": ACCEPTS_RESPONSE_PAYLOAD[kind]}
        if kind == "events_api":
            envelope.update(retry_attempt=0, retry_reason="")
        self.sent.add(envelope_id)
        await self.sockets[-1].send_json(envelope)
        return envelope_id

    async def ack(self, envelope_id: str, seconds: float = 10.0) -> dict[str, Any]:
        """The app's acknowledgement of an envelope."""
        await self._until(lambda: envelope_id in self.acks, f"no ack of {envelope_id}", seconds)
        return self.acks[envelope_id]
