"""Test support: a live timebot on loopback, GraphQL over real HTTP, organisations to test in."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette

from mail.queues.parts import MailParts
from plumbing.clock import Clock
from plumbing.db import unit_of_work
from service.embedded import EmbeddedService
from service.organisation.provisioning import add_person, create_organisation
from shell.app import create_app
from tests.migrated import create_migrated_pg_database, place_migrated_sqlite
from tests.net import free_port, started
from tests.pg import create_pg_database, drop_pg_database_soon, pg_url
from timebot.config import Settings, load_settings
from timebot.process.runtime import Runtime

DAY_MS = 86_400_000
# Strong enough for `load_settings` (a weak or placeholder TIMEBOT_SECRET_KEY is refused).
TEST_SECRET_KEY = "tests-only-9fK2mQ7vX4pL8sR1wN6bZ3yT5cH0dGjA"
HOUR_MS = 3_600_000
# The test servers' webhooks and OpenID providers run on loopback: the operator's allow-list
# (TIMEBOT_OUTBOUND_ALLOWED_NETWORKS) lets the service reach them.
LOOPBACK_ALLOWED = "127.0.0.0/8,::1"


@dataclass
class LiveServer:
    """A running timebot: real uvicorn on 127.0.0.1, its app and runtime at hand."""

    backend: str
    base_url: str
    app: Starlette
    settings: Settings
    clock: Clock
    server: uvicorn.Server
    task: asyncio.Task[None]
    databases: list[str] = field(default_factory=list)

    @property
    def service(self) -> EmbeddedService:
        service = self.app.state.service
        assert service is not None
        return service  # type: ignore[no-any-return]

    @property
    def graphql_url(self) -> str:
        return f"{self.base_url}/graphql"


async def start_live_server(
    backend: str,
    data_dir: Path,
    extra_env: dict[str, str] | None = None,
    reuse_databases: list[str] | None = None,
    auto_subscribe: bool = False,
    migrated: bool = True,
) -> LiveServer:
    """`reuse_databases` (PostgreSQL: the `databases` of a stopped server; SQLite: pass the same
    data_dir) restarts on existing data instead of fresh databases. Fresh databases are copies
    of migrated templates (tests.migrated), so that the start's migration finds nothing to do;
    `migrated=False` starts on empty ones, for a test of what the start's migration does."""
    databases: list[str] = []
    env = {
        "TIMEBOT_DATA_DIR": str(data_dir),
        "TIMEBOT_SMTP_PORT": "0",
        "TIMEBOT_SECRET_KEY": TEST_SECRET_KEY,
        "TIMEBOT_HTTP_HOST": "127.0.0.1",
        "TIMEBOT_OUTBOUND_ALLOWED_NETWORKS": LOOPBACK_ALLOWED,
    }
    if backend == "postgresql":
        if reuse_databases:
            service_db, bot_db = reuse_databases
        elif migrated:
            service_db = await create_migrated_pg_database("service")
            bot_db = await create_migrated_pg_database("timebot")
        else:
            service_db = await create_pg_database()
            bot_db = await create_pg_database()
        databases += [service_db, bot_db]
        env["TIMEBOT_SERVICE_DATABASE_URL"] = pg_url(service_db)
        env["TIMEBOT_DATABASE_URL"] = pg_url(bot_db)
    port = free_port()
    env["TIMEBOT_HTTP_PORT"] = str(port)
    env.update(extra_env or {})
    settings = load_settings(env)
    if migrated:
        await place_migrated_sqlite(settings.service_database_url, "service")
        await place_migrated_sqlite(settings.database_url, "timebot")
    clock = Clock()
    app = create_app(settings, clock, auto_subscribe=auto_subscribe)
    # The server keeps an idle connection longer than the clients' pools do (httpx: 5 s), so
    # that a client never sends on a connection the server is closing at that moment (an
    # httpx.ReadError in a test that waited about 5 s between two requests).
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", lifespan="on", access_log=False,
        timeout_keep_alive=30,
    )
    server = uvicorn.Server(config)
    task = await started(server, "the live server")
    return LiveServer(backend, f"http://127.0.0.1:{port}", app, settings, clock, server, task,
                      databases)


@contextmanager
def sqlite_write_lock_held(path: Path) -> Iterator[None]:
    """Another connection holds the SQLite file's write lock (a long writer of another
    process) until the block ends."""
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


@asynccontextmanager
async def sqlite_write_lock_taken(path: Path, *, seconds: float = 30.0) -> AsyncIterator[None]:
    """`sqlite_write_lock_held` for a database this event loop's server writes too: the lock
    is asked for without waiting, and asked again after yielding to the loop while a writer of
    the server holds it. (Waiting in sqlite3's busy handler would block the loop, and with it
    the server's open write transaction that the wait is for: locked until the timeout.)"""
    holder = sqlite3.connect(path, isolation_level=None, timeout=0)
    deadline = asyncio.get_running_loop().time() + seconds
    try:
        while True:
            try:
                holder.execute("BEGIN IMMEDIATE")
                break
            except sqlite3.OperationalError:
                if asyncio.get_running_loop().time() > deadline:
                    raise
                await asyncio.sleep(0.01)
        try:
            yield
        finally:
            holder.execute("ROLLBACK")
    finally:
        holder.close()


async def stop_live_server(live: LiveServer) -> None:
    live.server.should_exit = True
    await live.task
    for name in live.databases:
        drop_pg_database_soon(name)


class GraphQLError(AssertionError):
    def __init__(self, body: dict[str, Any]) -> None:
        super().__init__(f"GraphQL errors: {body.get('errors')} / {body.get('permissionsErrors')}")
        self.body = body


@dataclass
class GQL:
    """POST /graphql with one person's key."""

    http: httpx.AsyncClient
    url: str
    apikey: str | None

    async def raw(self, query: str, variables: dict[str, Any] | None = None) -> httpx.Response:
        headers = {"apikey": self.apikey} if self.apikey is not None else {}
        return await self.http.post(
            self.url, json={"query": query, "variables": variables or {}}, headers=headers
        )

    async def body(self, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        """The whole response body (data, errors, permissionsErrors); asserts HTTP 200."""
        response = await self.raw(query, variables)
        assert response.status_code == 200, response.text
        return response.json()  # type: ignore[no-any-return]

    async def __call__(self, query: str, variables: dict[str, Any] | None = None) -> Any:
        """`data`, asserting there are neither errors nor permission errors."""
        body = await self.body(query, variables)
        if body.get("errors") or body.get("permissionsErrors"):
            raise GraphQLError(body)
        return body["data"]

    async def error(self, query: str, variables: dict[str, Any] | None = None) -> str:
        """The first error message; asserts there is one."""
        body = await self.body(query, variables)
        assert body.get("errors"), f"expected an error, got {body}"
        return str(body["errors"][0]["message"])

    async def denied(self, query: str, variables: dict[str, Any] | None = None) -> list[str]:
        """The permissionsErrors paths; asserts there are some and no errors."""
        body = await self.body(query, variables)
        assert not body.get("errors"), body
        assert body.get("permissionsErrors"), f"expected permission errors, got {body}"
        return list(body["permissionsErrors"])


@dataclass
class Member:
    id: str
    name: str
    email: str
    apikey: str
    gql: GQL


@dataclass
class Org:
    """A fresh organisation on the live server: each test gets its own tenant."""

    id: str
    live: LiveServer
    http: httpx.AsyncClient
    admin: Member
    members: dict[str, Member] = field(default_factory=dict)

    def gql_for(self, apikey: str | None) -> GQL:
        return GQL(self.http, self.live.graphql_url, apikey)

    async def add_member(
        self, name: str, role: str = "employee", email: str | None = None
    ) -> Member:
        """A person of a role kind (admin, manager, employee) with a key; set-up, not under test."""
        address = email or f"{name.lower().replace(' ', '.')}.{uuid.uuid4().hex[:6]}@example.com"
        async with unit_of_work(self.live.service.sessions) as session:
            person, key = await add_person(
                session, self.id, name, address, role, self.live.clock.now_ms()
            )
        member = Member(person.id, name, person.email, key, self.gql_for(key))
        self.members[name] = member
        return member


async def new_org(live: LiveServer, http: httpx.AsyncClient, name: str = "Acme") -> Org:
    suffix = uuid.uuid4().hex[:8]
    async with unit_of_work(live.service.sessions) as session:
        created = await create_organisation(
            session, f"{name} {suffix}", "Ada Admin", f"ada.{suffix}@example.com",
            live.clock.now_ms(),
        )
    admin = Member(
        created.admin.id,
        created.admin.name,
        created.admin.email,
        created.apikey,
        GQL(http, live.graphql_url, created.apikey),
    )
    return Org(created.organisation.id, live, http, admin)


def mail_of(runtime: Runtime) -> MailParts:
    """The mail front's queues (inbox, outbox and its worker) of a running app's runtime."""
    from mail.review_component import component_of

    mail: MailParts = component_of(runtime).ctx.mail
    return mail
