"""The embedded time tracking service: database, schema and executor, started with the app."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from plumbing.clock import SYSTEM_CLOCK, Clock
from plumbing.db import create_engine, is_sqlite, session_factory
from service.db import migrate
from service.outbound import OutboundPolicy
from service.timesheets.pending import rebuild_missing
from service.timesheets.reminders import approval_sweeps
from service.webhooks.worker import WebhookWorker

if TYPE_CHECKING:
    from graphql import GraphQLSchema

    from service.graphql.execution import Executor


@dataclass
class EmbeddedService:
    database_url: str
    clock: Clock = field(default_factory=lambda: SYSTEM_CLOCK)
    # Where requests to addresses an administrator chose (webhooks, custom OpenID) may go.
    outbound: OutboundPolicy = field(default_factory=OutboundPolicy)
    engine: AsyncEngine = field(init=False)
    sessions: async_sessionmaker[AsyncSession] = field(init=False)
    webhooks: WebhookWorker = field(init=False)

    def __post_init__(self) -> None:
        self.engine = create_engine(self.database_url)
        self.sessions = session_factory(self.engine)
        # Queries read through their own engine: on SQLite they then do not queue for the
        # write lock; on PostgreSQL it is simply the same engine.
        self.read_engine = (
            create_engine(self.database_url, read_only=True)
            if is_sqlite(self.database_url)
            else self.engine
        )
        self.read_sessions = session_factory(self.read_engine)
        self.webhooks = WebhookWorker(self.sessions, self.clock, outbound=self.outbound)
        self.webhooks.periodic.append(approval_sweeps)

    # The schema and its executor are made when first asked for: importing every resolver and
    # building the schema is most of a start, which a `timebot` command that only writes to
    # the database (`service init` subscribing its new organisation) does not need.
    @cached_property
    def schema(self) -> GraphQLSchema:
        from service.graphql.schema import build_schema

        return build_schema()

    @cached_property
    def executor(self) -> Executor:
        from service.graphql.execution import Executor

        return Executor(
            self.schema,
            self.sessions,
            self.clock,
            after_commit=self.webhooks.after_commit,
            read_sessions=self.read_sessions,
        )

    async def start(self) -> None:
        await migrate(self.engine)
        # Who may act on what, for submitted timesheets that have no row (a database filled
        # before the table existed): bounded by what is submitted, in short transactions.
        await rebuild_missing(self.sessions)
        await self.webhooks.start()

    async def stop(self) -> None:
        await self.webhooks.stop()
        await self.engine.dispose()
        if self.read_engine is not self.engine:
            await self.read_engine.dispose()

    def routes(self) -> list[Any]:
        from service.graphql.http import graphql_routes
        from service.legacy.routes import legacy_routes

        return [*graphql_routes(self.executor), *legacy_routes(self.executor)]
