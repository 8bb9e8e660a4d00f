"""What making a fixture and testing an upgrade share: a release's or head's `timebot` run as a
subprocess on a data dir (and, on PostgreSQL, two databases), and mail sent and read the way
the suite does (SMTP with the trust headers of a verifying MTA, the Maildir outbox)."""

from __future__ import annotations

import asyncio
import email.policy
import mailbox
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path
from typing import Any

import aiosmtplib
import httpx

from tests.net import free_port
from tests.pg import pg_url
from tests.timebot.serve_process import Served, serve_env, serving
from tests.timebot.test_cli import Run, timebot
from tests.upgrade.releases import release_env

TRUSTED = "mx.timebot.test"  # the authserv-id whose Authentication-Results are believed
MAIL_DOMAIN = "timebot.localhost"


@dataclass
class Instance:
    """One timebot's data: its data dir and, on PostgreSQL, its two databases (service, bot);
    `version` None runs head's code, else that release's."""

    backend: str
    data_dir: Path
    version: str | None
    databases: list[str] = field(default_factory=list)
    http_port: int = field(default_factory=free_port)
    smtp_port: int = field(default_factory=free_port)

    def env(self, **extra: str) -> dict[str, str]:
        env = serve_env(self.data_dir, TIMEBOT_HTTP_PORT=str(self.http_port),
                        TIMEBOT_HTTP_HOST="127.0.0.1", TIMEBOT_SMTP_PORT=str(self.smtp_port),
                        TIMEBOT_MAIL_TRUSTED_AUTHSERV_IDS=TRUSTED)
        env.update(extra)
        if self.databases:
            service, bot = self.databases
            env.update(TIMEBOT_SERVICE_DATABASE_URL=pg_url(service),
                       TIMEBOT_DATABASE_URL=pg_url(bot))
        return release_env(self.version, env) if self.version else env

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    async def cli(self, *args: str, **extra: str) -> Run:
        run = await timebot(self.env(**extra), *args, cwd=self.data_dir.parent)
        assert run.code == 0, (args, run.out, run.err)
        return run

    @asynccontextmanager
    async def serving(self, **extra: str) -> AsyncIterator[Served]:
        async with serving(self.env(**extra), cwd=self.data_dir.parent) as served:
            yield served
        assert served.process.returncode in (0, -15), "".join(served.err[-30:])


async def graphql(http: httpx.AsyncClient, base: str, apikey: str, query: str,
                  variables: dict[str, Any] | None = None) -> dict[str, Any]:
    """The whole answer (data, errors) of one GraphQL request with a person's key."""
    response = await http.post(f"{base}/graphql", headers={"apikey": apikey},
                               json={"query": query, "variables": variables or {}})
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


async def gql(http: httpx.AsyncClient, base: str, apikey: str, query: str,
              variables: dict[str, Any] | None = None) -> dict[str, Any]:
    """`data`, asserting there were no errors."""
    body = await graphql(http, base, apikey, query, variables)
    assert not body.get("errors") and not body.get("permissionsErrors"), body
    return body["data"]  # type: ignore[no-any-return]


async def send_mail(port: int, sender: str, to: str, subject: str, body: str,
                    message_id: str, **headers: str) -> None:
    """A mail to timebot's SMTP listener as a verifying MTA hands it on (DMARC passed)."""
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = subject
    message["Message-ID"] = message_id
    message["Authentication-Results"] = (
        f"{TRUSTED}; dmarc=pass header.from={sender.rpartition('@')[2]}")
    for name, value in headers.items():
        message[name.replace("_", "-")] = value
    message.set_content(body)
    await aiosmtplib.send(message, hostname="127.0.0.1", port=port, timeout=30)


def parse(raw: bytes) -> EmailMessage:
    parsed = BytesParser(policy=email.policy.default).parsebytes(raw)
    assert isinstance(parsed, EmailMessage)
    return parsed


def text_of(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content())  # type: ignore[attr-defined]


def maildir_messages(folder: Path) -> list[EmailMessage]:
    if not folder.exists():
        return []
    return [parse(message.as_bytes())
            for _, message in mailbox.Maildir(str(folder), create=False).iteritems()]


async def eventually(check: Any, what: str, seconds: float = 60.0) -> Any:
    """`check()`'s first true value (sync or async), polled; fails naming `what`."""
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.1)
