"""Support of the backup tests (no tests here): fresh databases per backend, mail sent to
timebot's SMTP listener as the demo's people, and the Maildir outbox read as files."""

from __future__ import annotations

import asyncio
import email
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from email.message import EmailMessage
from email.policy import default
from pathlib import Path
from typing import Any

import aiosmtplib
import httpx

from tests.pg import create_pg_database, drop_pg_database, pg_url

NORTHWIND = "northwind.example"
TIME = "time@timebot.localhost"
MakeDatabases = Callable[[], Awaitable[dict[str, str]]]


async def fresh_databases(backend: str) -> AsyncIterator[MakeDatabases]:
    """Makes the settings of a fresh pair of databases (SQLite: none, the data dir's); the
    PostgreSQL ones made are dropped at the end."""
    made: list[str] = []

    async def make() -> dict[str, str]:
        if backend == "sqlite":
            return {}
        service, bot = await create_pg_database(), await create_pg_database()
        made.extend((service, bot))
        return {"TIMEBOT_SERVICE_DATABASE_URL": pg_url(service),
                "TIMEBOT_DATABASE_URL": pg_url(bot)}

    try:
        yield make
    finally:
        for name in made:
            await drop_pg_database(name)


def demo_keys(banner: list[str]) -> dict[str, str]:
    """The demo's API keys by first name, from `timebot serve --demo`'s banner."""
    found = re.findall(r"^\s+\w+\s+(\w+)@northwind\.example\s+apikey (\w+)$", "".join(banner),
                       re.M)
    return dict(found)


async def send(port: int, sender: str, to: str, subject: str, body: str) -> None:
    """Mail From one of the demo's people, authenticated as README's walkthrough has it."""
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = f"{sender}@{NORTHWIND}", to, subject
    message["Authentication-Results"] = f"demo.localhost; dmarc=pass header.from={NORTHWIND}"
    message.set_content(body)
    await aiosmtplib.send(message, hostname="127.0.0.1", port=port, timeout=30)


def outbox(data_dir: Path) -> dict[str, EmailMessage]:
    """The Maildir outbox's messages by file name (new/ and cur/)."""
    found: dict[str, EmailMessage] = {}
    for folder in ("new", "cur"):
        for path in sorted((data_dir / "outbox" / folder).glob("outbox.*")):
            message = email.message_from_bytes(path.read_bytes(), policy=default)
            assert isinstance(message, EmailMessage)
            found[path.name] = message
    return found


def text_of(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    return "" if part is None else str(part.get_content())  # type: ignore[attr-defined]


async def mail_to(data_dir: Path, to: str, subject: str, containing: str,
                  count: int = 1, besides: frozenset[str] = frozenset()) -> list[EmailMessage]:
    """Waits (two minutes at most) for `count` messages to `to` whose subject starts with
    `subject` and whose text holds `containing`, leaving out the files `besides`."""
    for _ in range(1200):
        found = [message for name, message in outbox(data_dir).items()
                 if name not in besides and message["To"] == to
                 and str(message["Subject"]).startswith(subject)
                 and containing in text_of(message)]
        if len(found) >= count:
            return found
        await asyncio.sleep(0.1)
    raise AssertionError(f"no {subject!r} with {containing!r} to {to} in {data_dir}/outbox")


async def gql(http: httpx.AsyncClient, base: str, apikey: str, query: str,
              variables: dict[str, Any] | None = None) -> Any:
    response = await http.post(f"{base}/graphql", headers={"apikey": apikey},
                               json={"query": query, "variables": variables or {}})
    assert response.status_code == 200, response.text
    body = response.json()
    assert not body.get("errors") and not body.get("permissionsErrors"), body
    return body["data"]
