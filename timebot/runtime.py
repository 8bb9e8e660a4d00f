"""What the running process holds: settings, clock, the embedded service (if any), the bot's
state database, the GraphQL client and the people directory, plus the start/stop hooks of
the optional parts (Slack, mail, scheduler)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from service.clock import Clock
from service.embedded import EmbeddedService
from timebot.client import ServiceClient
from timebot.config import Settings
from timebot.crypto import SecretBox
from timebot.directory import PeopleDirectory
from timebot.embedded_keys import EmbeddedKeys
from timebot.state.db import create_engine, migrate, session_factory

Hook = Callable[["Runtime"], Awaitable[None]]


@dataclass
class Runtime:
    settings: Settings
    clock: Clock
    service: EmbeddedService | None
    state_engine: AsyncEngine
    state_sessions: async_sessionmaker[AsyncSession]
    client: ServiceClient
    directory: PeopleDirectory
    on_start: list[Hook] = field(default_factory=list)
    on_stop: list[Hook] = field(default_factory=list)

    async def start(self) -> None:
        if self.service is not None:
            await self.service.start()
        await migrate(self.state_engine)
        for hook in self.on_start:
            await hook(self)

    async def stop(self) -> None:
        for hook in reversed(self.on_stop):
            await hook(self)
        await self.client.close()
        await self.state_engine.dispose()
        if self.service is not None:
            await self.service.stop()


def build_runtime(settings: Settings, clock: Clock, *, in_process: bool = False) -> Runtime:
    """`in_process`: reach the embedded service through ASGI instead of the network (the CLI,
    when no server is running)."""
    service = EmbeddedService(settings.service_database_url, clock=clock) if settings.embedded \
        else None
    transport: httpx.AsyncBaseTransport | None = None
    if in_process and service is not None:
        from starlette.applications import Starlette

        transport = httpx.ASGITransport(app=Starlette(routes=service.routes()))
    client = ServiceClient(settings.graphql_url, http_transport=transport)
    state_engine = create_engine(settings.database_url)
    state_sessions = session_factory(state_engine)
    provisioner = EmbeddedKeys(service.sessions, clock) if service is not None else None
    directory = PeopleDirectory(
        state_sessions, client, SecretBox(settings.secret_key), clock, provisioner
    )
    return Runtime(settings, clock, service, state_engine, state_sessions, client, directory)
