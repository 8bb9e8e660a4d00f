"""`timebot serve --workers 2`, a real subprocess, on SQLite and on PostgreSQL: replies sent over
SMTP to the shared listener are each decided once and answered by one receipt; a worker
killed with SIGKILL is started again and its singleton jobs are taken over by another
worker; SIGTERM drains (the parent and its workers exit 0, no inbox row is left claimed) and
what was left queued is sent, once, by the next start. The scenario runs from
tests/timebot/test_workers.py (SQLite) and test_workers_postgresql.py: a minute or more each,
in two files so that two of the suite's workers run them at once."""

from __future__ import annotations

import asyncio
import email
import email.policy
import json
import os
import signal
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from plumbing.db import create_engine
from tests.migrated import create_migrated_pg_database, place_migrated_sqlite
from tests.net import free_port
from tests.pg import drop_pg_database_soon, pg_url
from tests.sheets_over_http import submitted_to_max
from tests.timebot.test_cli import TIMEBOT, cli_env, timebot
from timebot.config import load_settings
from timebot.state.models import InboxMessage, OutboxMessage

AUTHSERV = "mx.workers.test"
DOMAIN = "workers.example"
FIRST_WAVE = 24
SECOND_WAVE = 8
SENDERS = 8  # SMTP sessions at once


class Serve:
    """`timebot serve --workers 2` with its stderr log lines (JSON) collected as they come."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.base = f"http://127.0.0.1:{env['TIMEBOT_HTTP_PORT']}"
        self.lines: list[dict[str, Any]] = []
        self.process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None

    async def start(self, http: httpx.AsyncClient) -> None:
        self.process = await asyncio.create_subprocess_exec(
            str(TIMEBOT), "serve", "--workers", "2", env=self.env,
            cwd=str(Path(self.env["TIMEBOT_DATA_DIR"]).parent),
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        )
        self._reader = asyncio.create_task(self._read())
        for _ in range(900):
            assert self.process.returncode is None, self.text()
            try:
                if (await http.get(f"{self.base}/readyz", timeout=2)).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)
        pytest.fail("timebot serve --workers 2 did not become ready in 90 s")

    async def _read(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        while line := await self.process.stderr.readline():
            try:
                self.lines.append(json.loads(line))
            except ValueError:
                self.lines.append({"event": line.decode(errors="replace").rstrip()})

    def text(self) -> str:
        return "\n".join(json.dumps(line) for line in self.lines[-60:])

    def problems(self) -> str:
        return "\n".join(json.dumps(line)[:2000] for line in self.lines
                         if line.get("level") in ("warning", "error", "critical"))

    def events(self, name: str) -> list[dict[str, Any]]:
        return [line for line in self.lines if line.get("event") == name]

    async def wait_event(self, name: str, match: Any = lambda line: True) -> dict[str, Any]:
        for _ in range(600):
            found = [line for line in self.events(name) if match(line)]
            if found:
                return found[-1]
            await asyncio.sleep(0.1)
        raise AssertionError(f"no {name} in the log:\n{self.text()}")

    async def stop(self) -> int:
        """SIGTERM; the exit status (a parent that does not exit within 40 s fails the test)."""
        assert self.process is not None
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            code = await asyncio.wait_for(self.process.wait(), timeout=40)
        finally:
            if self.process.returncode is None:
                self.process.kill()
                await self.process.wait()
            if self._reader is not None:
                await self._reader
        return code

    def children(self) -> set[int]:
        """The worker processes (multiprocessing's resource tracker left out)."""
        assert self.process is not None
        pid = self.process.pid
        listed = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        workers = set()
        for child in map(int, listed):
            try:
                command = Path(f"/proc/{child}/cmdline").read_bytes()
            except OSError:
                continue
            if b"spawn_main" in command:
                workers.add(child)
        return workers


@pytest.fixture(params=["sqlite", "postgresql"])
async def databases(request: pytest.FixtureRequest) -> AsyncIterator[dict[str, str]]:
    if request.param == "sqlite":
        yield {}
        return
    names = [await create_migrated_pg_database("service"),
             await create_migrated_pg_database("timebot")]
    try:
        yield {"TIMEBOT_SERVICE_DATABASE_URL": pg_url(names[0]),
               "TIMEBOT_DATABASE_URL": pg_url(names[1])}
    finally:
        for name in names:
            drop_pg_database_soon(name)


def outbox(data_dir: Path) -> list[EmailMessage]:
    folder = data_dir / "outbox" / "new"
    return [
        email.message_from_bytes(path.read_bytes(), policy=email.policy.default)  # type: ignore[misc]
        for path in sorted(folder.glob("*"))
    ] if folder.exists() else []


async def wait_outbox(data_dir: Path, reviews: int, receipts: int) -> tuple[
    list[EmailMessage], list[EmailMessage]
]:
    """Review requests (no In-Reply-To) and receipts (In-Reply-To) sent to max@."""
    for _ in range(900):
        mine = [m for m in outbox(data_dir) if f"max@{DOMAIN}" in str(m["To"])]
        found = ([m for m in mine if not m["In-Reply-To"]], [m for m in mine if m["In-Reply-To"]])
        if len(found[0]) >= reviews and len(found[1]) >= receipts:
            return found
        await asyncio.sleep(0.1)
    return found


async def send_reply(smtp_port: int, review: EmailMessage) -> str:
    """Max approves by e-mail, through the MTA in front (a trusted Authentication-Results);
    returns the reply's Message-ID."""
    message_id = f"<{uuid.uuid4().hex}@{DOMAIN}>"
    process = await asyncio.create_subprocess_exec(
        "swaks", "--server", f"127.0.0.1:{smtp_port}", "--to", str(review["Reply-To"]),
        "--from", f"max@{DOMAIN}", "--helo", f"client.{DOMAIN}", "--timeout", "30",
        "--header", f"Subject: Re: {review['Subject']}",
        "--header", f"Message-Id: {message_id}",
        "--header", f"In-Reply-To: {review['Message-ID']}",
        "--add-header", f"Authentication-Results: {AUTHSERV}; dmarc=pass header.from={DOMAIN}",
        "--body", "approve\n", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await process.communicate()
    assert process.returncode == 0, output.decode(errors="replace")
    return message_id


async def send_all(smtp_port: int, reviews: list[EmailMessage]) -> list[str]:
    slots = asyncio.Semaphore(SENDERS)

    async def one(review: EmailMessage) -> str:
        async with slots:
            return await send_reply(smtp_port, review)

    return list(await asyncio.gather(*(one(review) for review in reviews)))


def receipts_per_reply(data_dir: Path) -> Counter[str]:
    return Counter(
        str(m["In-Reply-To"]).strip() for m in outbox(data_dir)
        if m["In-Reply-To"] and f"max@{DOMAIN}" in str(m["To"])
    )


async def inbox_rows(database_url: str, model: Any = InboxMessage) -> list[Any]:
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            result = await connection.execute(select(model.__table__))
            return list(result.all())
    finally:
        await engine.dispose()


async def share_the_mail_and_survive_kill_and_sigterm(tmp_path: Path,
                                                      databases: dict[str, str]) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    http_port, smtp_port = free_port(), free_port()
    env = {
        **cli_env(data_dir), "TIMEBOT_HTTP_PORT": str(http_port),
        "TIMEBOT_SMTP_PORT": str(smtp_port), "TIMEBOT_MAIL_TRUSTED_AUTHSERV_IDS": AUTHSERV,
        # DEBUG: each accepted mail is logged with the worker that took it (INFO logs outcomes).
        "TIMEBOT_LOG_LEVEL": "DEBUG", **databases,
    }
    settings = load_settings(env)
    await place_migrated_sqlite(settings.service_database_url, "service")
    await place_migrated_sqlite(settings.database_url, "timebot")
    created = (await timebot(env, "service", "init", "--org", "Workers",
                             "--admin-name", "Ada", "--admin-email", f"ada@{DOMAIN}")).json()
    admin = created["admin"]["apikey"]
    sheets = FIRST_WAVE + SECOND_WAVE
    async with httpx.AsyncClient(timeout=60) as http:
        served = Serve(env)
        await served.start(http)
        try:
            base = served.base
            await submitted_to_max(http, base, admin, DOMAIN, sheets)
            # The review requests come through the webhook subscription: a singleton job.
            reviews, _ = await wait_outbox(data_dir, sheets, 0)
            assert len(reviews) == sheets, served.text()

            # Many replies at once over SMTP, to whichever worker accepts each session.
            first = await send_all(smtp_port, reviews[:FIRST_WAVE])
            await wait_outbox(data_dir, sheets, FIRST_WAVE)
            await asyncio.sleep(1.0)  # a doubled receipt would have arrived by now
            counts = receipts_per_reply(data_dir)
            assert {reply: counts[reply] for reply in first} == dict.fromkeys(first, 1), counts
            rows = await inbox_rows(settings.database_url)
            assert len(rows) == FIRST_WAVE
            assert {(row.status, row.attempts) for row in rows} == {("done", 1)}, \
                served.problems()
            assert all("approved" in (row.outcome or "").lower() for row in rows), \
                [row.outcome for row in rows]
            working = {line.get("worker") for line in served.lines
                       if line.get("event") in ("mail_accepted", "http_request")}
            assert {0, 1} <= working, working
            assert not [line for line in served.lines if "locked" in json.dumps(line)], \
                "a worker met SQLite's lock"

            # SIGKILL the worker running the singleton jobs: started again, jobs taken over.
            holder = (await served.wait_event("singleton_jobs_taken"))["pid"]
            assert len(served.events("singleton_jobs_taken")) == 1, "both ran the jobs"
            before = served.children()
            assert holder in before and len(before) == 2, (holder, before)
            os.kill(holder, signal.SIGKILL)
            taken = await served.wait_event("singleton_jobs_taken",
                                            lambda line: line["pid"] != holder)
            restarted = await served.wait_event("worker_started",
                                                lambda line: line["pid"] not in before)
            # Ready: three application start-ups in the log (the two first and the new one).
            for _ in range(600):
                if len(served.events("Application startup complete.")) == 3:
                    break
                await asyncio.sleep(0.1)
            assert await _ready(http, base)
            after = served.children()
            assert holder not in after and restarted["pid"] in after and len(after) == 2
            assert taken["pid"] in after

            # More replies, then SIGTERM at once: the parent and its workers exit 0 and
            # leave no row claimed; what they did not finish waits, queued, for the next start.
            second = await send_all(smtp_port, reviews[FIRST_WAVE:])
            assert await served.stop() == 0, served.text()
            stopped = served.events("stopped")[-1]
            assert stopped["killed"] == 0 and set(stopped["exitcodes"]) == {0}, stopped
            rows = await inbox_rows(settings.database_url)
            assert len(rows) == sheets
            assert {row.status for row in rows} <= {"done", "queued"}, \
                [(row.status, row.outcome) for row in rows]
            outgoing = await inbox_rows(settings.database_url, OutboxMessage)
            assert "working" not in {row.status for row in outgoing}, served.problems()
        finally:
            if served.process is not None and served.process.returncode is None:
                await served.stop()

        again = Serve(env)
        await again.start(http)
        try:
            await wait_outbox(data_dir, sheets, sheets)
            await asyncio.sleep(1.0)
            counts = receipts_per_reply(data_dir)
            replies = first + second
            assert {reply: counts[reply] for reply in replies} == dict.fromkeys(replies, 1), \
                counts
            rows = await inbox_rows(settings.database_url)
            assert {row.status for row in rows} == {"done"}
        finally:
            assert await again.stop() == 0, again.text()


async def _ready(http: httpx.AsyncClient, base: str) -> bool:
    try:
        return (await http.get(f"{base}/readyz", timeout=2)).status_code == 200
    except httpx.TransportError:
        return False
