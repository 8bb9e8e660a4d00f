"""A release's fixture put back as its operator would have it: the SQLite files and the Maildir
outbox in a fresh data dir, or the PostgreSQL dumps restored with psql into fresh databases;
and head run on it an hour after the fixture was made (clock_shim), relaying its mail to an
SMTP sink of the test."""

from __future__ import annotations

import asyncio
import gzip
import os
import shutil
import subprocess
import tarfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from aiosmtpd.smtp import SMTP, Envelope, Session

from tests.net import free_port
from tests.pg import create_pg_database, drop_pg_database
from tests.upgrade.harness import Instance, parse, text_of
from tests.upgrade.rows import pg_dsn

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHIM = Path(__file__).resolve().parent / "clock_shim"
HOUR_MS = 3_600_000


@asynccontextmanager
async def restored(version: str, backend: str, work: Path) -> AsyncIterator[Instance]:
    """Head's instance on the release's data (the databases dropped afterwards)."""
    fixture = FIXTURES / version / backend
    data_dir = work / "var"
    data_dir.mkdir(parents=True)
    if backend == "sqlite":
        for name in ("service", "bot"):
            with gzip.open(fixture / f"{name}.db.gz") as read, \
                    (data_dir / f"{name}.db").open("wb") as write:
                shutil.copyfileobj(read, write)
        with tarfile.open(fixture / "outbox.tar.gz") as tar:
            tar.extractall(data_dir, filter="data")
        yield Instance(backend, data_dir, None)
        return
    databases = [await create_pg_database(), await create_pg_database()]
    try:
        for name, database in zip(("service", "bot"), databases, strict=True):
            await asyncio.to_thread(
                subprocess.run, ["psql", "-q", "-v", "ON_ERROR_STOP=1", "-d", pg_dsn(database)],
                input=gzip.decompress((fixture / f"{name}.sql.gz").read_bytes()),
                check=True, capture_output=True)
        yield Instance(backend, data_dir, None, databases)
    finally:
        for database in databases:
            await drop_pg_database(database)


def head_clock(made_ms: int) -> dict[str, str]:
    """The environment that runs head an hour after `made_ms` (see clock_shim)."""
    offset = made_ms + HOUR_MS - int(time.time() * 1000)
    path = os.pathsep.join([str(SHIM), *filter(None, [os.environ.get("PYTHONPATH")])])
    return {"TIMEBOT_TEST_CLOCK_OFFSET_MS": str(offset), "PYTHONPATH": path}


@dataclass
class Sink:
    """An SMTP relay that keeps every message it is handed."""

    port: int = field(default_factory=free_port)
    received: list[EmailMessage] = field(default_factory=list)

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        self.received.append(parse(bytes(envelope.original_content or b"")))
        return "250 OK"

    @asynccontextmanager
    async def running(self) -> AsyncIterator[Sink]:
        server = await asyncio.get_running_loop().create_server(
            lambda: SMTP(self), "127.0.0.1", self.port)
        try:
            yield self
        finally:
            server.close()
            await server.wait_closed()

    def message_ids(self) -> Counter[str]:
        return Counter(str(message["Message-ID"]) for message in self.received)

    def to(self, address: str, subject: str = "", text: str = "") -> list[EmailMessage]:
        return [message for message in self.received
                if address in str(message["To"]) and subject in str(message["Subject"])
                and (not text or text in text_of(message))]

    def relay(self) -> dict[str, Any]:
        return {"TIMEBOT_SMTP_RELAY": f"127.0.0.1:{self.port}"}
