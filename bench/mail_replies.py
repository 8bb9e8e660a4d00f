"""Approval replies by mail, end to end, on a live timebot (SQLite, loopback):

- mail_replies_throughput: replies per second from the first SMTP transaction to the last
  receipt delivered to the outbox — each reply DKIM-signed (verified against a key published
  through TIMEBOT_DKIM_TXT_FILE), its approval applied with the approver's own key through
  GraphQL, its receipt queued and written to the Maildir. Baseline: a bare aiosmtpd sink (250
  to every message, nothing else) fed the same messages by the same clients in the same run.
- mail_replies_receipt_p99: p99 ms from the start of a reply's SMTP transaction to its receipt
  being delivered, with replies arriving at a steady 50 per second. Baseline: the sink's p99
  SMTP transaction time at the same rate.

The SMTP clients run in a process of their own, as a mail server in front would: the load
they generate does not take CPU from the process measured (timebot, or the sink).

BENCH_MAIL_REPLIES (default 300) sets how many replies the throughput run sends (the latency
run sends 10 s worth at 50/s). BENCH_MAIL_DATABASE=postgresql runs both databases on the
PostgreSQL server of TIMEBOT_TEST_PG (default postgresql://postgres@127.0.0.1:5432/postgres)
instead of SQLite. BENCH_MAIL_RATE (default 50) changes the latency run's rate, for diagnosis.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import multiprocessing
import os
import secrets
import tempfile
import time
import uuid
from dataclasses import dataclass
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import formatdate
from pathlib import Path
from typing import Any

import aiosmtplib
import dkim
import httpx
import structlog
import uvicorn
from aiosmtpd.smtp import SMTP as SMTPProtocol
from aiosmtpd.smtp import Envelope, Session
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from sqlalchemy import func, select

from bench.common import Figure, note
from service.clock import Clock
from service.db import unit_of_work
from service.provisioning import add_person, create_organisation
from timebot.app import create_app
from timebot.config import load_settings
from timebot.state.models import OutboxMessage
from timebot.tokens import make_token, reply_address

FIGURES = ("mail_replies_throughput", "mail_replies_receipt_p99")

DOMAIN = "timebot.localhost"
SENDER_DOMAIN = "example.com"
WEEK0 = 1_735_516_800_000  # Monday 30 December 2024, 00:00 UTC
DAY_MS = 86_400_000
HOUR_MS = 3_600_000
CLIENTS = 8
RATE = int(os.environ.get("BENCH_MAIL_RATE", "50"))  # replies per second, latency run
RATE_SECONDS = 10


def _port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Key:
    private_pem: bytes
    txt_line: str


def _key() -> Key:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM,
                                serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption())
    public = key.public_key().public_bytes(serialization.Encoding.DER,
                                           serialization.PublicFormat.SubjectPublicKeyInfo)
    line = f"s1._domainkey.{SENDER_DOMAIN} v=DKIM1; k=rsa; p={base64.b64encode(public).decode()}"
    return Key(private, line)


def _reply(key: Key, sender: str, token: str) -> tuple[str, bytes]:
    message = EmailMessage()
    message["From"] = f"Mia <{sender}>"
    message["To"] = reply_address(token, DOMAIN)
    message["Subject"] = "Re: Timesheet of Bob"
    message["Date"] = formatdate()
    message["Message-ID"] = f"<{uuid.uuid4().hex}@{SENDER_DOMAIN}>"
    message.set_content(
        "Approved, thanks!\n\nOn Mon, 9 Mar 2026 at 09:00, timebot wrote:\n> Reply approve.\n"
    )
    raw = message.as_bytes(policy=SMTP)
    signature = dkim.sign(raw, b"s1", SENDER_DOMAIN.encode(), key.private_pem,
                          include_headers=[b"from", b"to", b"subject", b"message-id", b"date"])
    return reply_address(token, DOMAIN), bytes(signature) + raw


class _Sink:
    async def handle_DATA(self, server: Any, session: Session, envelope: Envelope) -> str:
        return "250 2.0.0 OK"


class LoadGenerator:
    """The SMTP clients, in a separate process (spawned once, warmed before any timing)."""

    def __init__(self) -> None:
        from concurrent.futures import ProcessPoolExecutor

        self.pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))

    async def _call(self, function: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.pool, function, *args)

    async def warm(self) -> None:
        await self._call(_ready)

    async def send_all(self, port: int, mails: list[tuple[str, bytes]], clients: int) -> None:
        await self._call(_send_all_sync, port, mails, clients)

    async def send_at_rate(self, port: int, mails: list[tuple[str, bytes]], rate: int
                           ) -> dict[str, tuple[float, float]]:
        result: dict[str, tuple[float, float]] = await self._call(
            _send_at_rate_sync, port, mails, rate
        )
        return result

    def close(self) -> None:
        self.pool.shutdown()


def _ready() -> bool:
    return True


def _send_all_sync(port: int, mails: list[tuple[str, bytes]], clients: int) -> list[float]:
    return asyncio.run(_send_all(port, mails, clients))


def _send_at_rate_sync(port: int, mails: list[tuple[str, bytes]], rate: int
                       ) -> dict[str, tuple[float, float]]:
    return asyncio.run(_send_at_rate(port, mails, rate))


async def _send_all(port: int, mails: list[tuple[str, bytes]], clients: int) -> list[float]:
    """Send every mail over `clients` connections; the SMTP transaction time of each (s)."""
    queue: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()
    for mail in mails:
        queue.put_nowait(mail)
    times: list[float] = []

    async def client() -> None:
        smtp = aiosmtplib.SMTP(hostname="127.0.0.1", port=port, timeout=60, start_tls=False)
        async with smtp:
            while not queue.empty():
                rcpt, raw = queue.get_nowait()
                started = time.perf_counter()
                await smtp.sendmail(f"mia@{SENDER_DOMAIN}", [rcpt], raw)
                times.append(time.perf_counter() - started)

    await asyncio.gather(*(client() for _ in range(clients)))
    return times


async def _send_at_rate(port: int, mails: list[tuple[str, bytes]], rate: int
                        ) -> dict[str, tuple[float, float]]:
    """One connection per mail, started every 1/rate s; {rcpt: (start, transaction s)}."""
    started_at: dict[str, tuple[float, float]] = {}

    async def one(rcpt: str, raw: bytes) -> None:
        started = time.time()
        clock = time.perf_counter()
        await aiosmtplib.send(raw, sender=f"mia@{SENDER_DOMAIN}", recipients=[rcpt],
                              hostname="127.0.0.1", port=port, start_tls=False, timeout=60)
        started_at[rcpt] = (started, time.perf_counter() - clock)

    tasks = []
    begin = time.perf_counter()
    for index, (rcpt, raw) in enumerate(mails):
        delay = begin + index / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(rcpt, raw)))
    await asyncio.gather(*tasks)
    return started_at


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


PG_ADMIN_DSN = os.environ.get("TIMEBOT_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")


async def _pg(statement: str) -> None:
    import asyncpg

    connection = await asyncpg.connect(PG_ADMIN_DSN)
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


class World:
    def __init__(self, root: Path, key: Key, databases: dict[str, str] | None = None) -> None:
        self.root = root
        self.key = key
        self.smtp_port = _port()
        http_port = _port()
        txt = root / "dkim.txt"
        txt.write_text(key.txt_line + "\n")
        self.settings = load_settings({
            "TIMEBOT_DATA_DIR": str(root / "data"),
            "TIMEBOT_HTTP_PORT": str(http_port),
            "TIMEBOT_HTTP_HOST": "127.0.0.1",
            "TIMEBOT_SMTP_PORT": str(self.smtp_port),
            "TIMEBOT_MAIL_DOMAIN": DOMAIN,
            "TIMEBOT_DKIM_TXT_FILE": str(txt),
            "TIMEBOT_SECRET_KEY": secrets.token_urlsafe(48),
            **(databases or {}),
        })
        self.clock = Clock()
        self.app = create_app(self.settings, self.clock, auto_subscribe=False)
        self.runtime: Any = self.app.state.runtime
        self.server = uvicorn.Server(uvicorn.Config(
            self.app, host="127.0.0.1", port=http_port, log_level="warning", lifespan="on",
            access_log=False,
        ))
        self.url = f"http://127.0.0.1:{http_port}/graphql"
        self.task: asyncio.Task[None] | None = None
        self.http = httpx.AsyncClient(timeout=60)

    async def start(self) -> None:
        self.task = asyncio.create_task(self.server.serve())
        for _ in range(1500):
            if self.server.started:
                return
            await asyncio.sleep(0.02)
        raise RuntimeError("the server did not start")

    async def stop(self) -> None:
        await self.http.aclose()
        self.server.should_exit = True
        if self.task is not None:
            await self.task

    async def gql(self, key: str, query: str, variables: dict[str, Any]) -> Any:
        response = await self.http.post(self.url, json={"query": query, "variables": variables},
                                        headers={"apikey": key})
        body = response.json()
        if body.get("errors") or body.get("permissionsErrors"):
            raise RuntimeError(str(body))
        return body["data"]

    async def timesheets(self, count: int) -> tuple[str, list[str]]:
        """`count` submitted weekly timesheets of Bob, waiting for his manager Mia: (Mia's id,
        submit event ids)."""
        service = self.runtime.service
        now = self.clock.now_ms()
        async with unit_of_work(service.sessions) as session:
            created = await create_organisation(session, f"Bench {uuid.uuid4().hex[:6]}",
                                                "Ada", "ada@bench.example", now)
            bob, bob_key = await add_person(session, created.organisation.id, "Bob",
                                            f"bob.{uuid.uuid4().hex[:6]}@{SENDER_DOMAIN}",
                                            "employee", now)
            mia, _ = await add_person(session, created.organisation.id, "Mia",
                                      f"mia.{uuid.uuid4().hex[:6]}@{SENDER_DOMAIN}",
                                      "manager", now)
        admin = created.apikey
        await self.gql(admin, "mutation($m: SvcId!, $p: SvcId!) { makeManagerOfPerson("
                       "managerId: $m, personId: $p) { id } }", {"m": mia.id, "p": bob.id})
        await self.gql(admin, "mutation($s: [SvcApprovalStageInput]) { "
                       "editOrganisationApprovalStages(stages: $s) { id } }",
                       {"s": [{"type": "ppm"}]})
        events = []
        semaphore = asyncio.Semaphore(8)

        async def week(index: int) -> str:
            start = WEEK0 + index * 7 * DAY_MS
            async with semaphore:
                await self.gql(bob_key, "mutation($s: SvcTimestamp!, $p: SvcId!) { addTimeRecord("
                               "startTime: $s, duration: 28800000, personId: $p) { id } }",
                               {"s": start + DAY_MS + 9 * HOUR_MS, "p": bob.id})
                data = await self.gql(bob_key, "mutation($p: SvcId!, $s: SvcTimestamp!, "
                                      "$e: SvcTimestamp!) { submitTimesheet(personId: $p, "
                                      "startTime: $s, endTime: $e) { id submitId } }",
                                      {"p": bob.id, "s": start, "e": start + 7 * DAY_MS})
            event = data["submitTimesheet"]
            return str(event["submitId"] or event["id"])

        events = list(await asyncio.gather(*(week(self._weeks + i) for i in range(count))))
        self._weeks += count
        self.mia_email = mia.email
        return mia.id, events

    _weeks = 0
    mia_email = ""

    def replies(self, mia_id: str, events: list[str]) -> list[tuple[str, bytes]]:
        expires = self.clock.now_ms() + 7 * DAY_MS
        return [
            _reply(self.key, self.mia_email, make_token(
                self.settings.secret_key, "reply", event_id=event, approver_id=mia_id, stage=0,
                expires_at_ms=expires,
            ))
            for event in events
        ]

    async def receipts_delivered(self) -> int:
        async with self.runtime.state_sessions() as session:
            return int(await session.scalar(
                select(func.count()).select_from(OutboxMessage).where(
                    OutboxMessage.kind == "receipt", OutboxMessage.status == "done")
            ) or 0)

    async def wait_receipts(self, total: int, limit_s: float = 600) -> None:
        deadline = time.perf_counter() + limit_s
        while await self.receipts_delivered() < total:
            if time.perf_counter() > deadline:
                raise RuntimeError("receipts did not all arrive")
            # The count runs in the process measured: often enough to time the end of a
            # run to a few per cent, rarely enough to cost little (latency uses sent_ms).
            await asyncio.sleep(0.05)

    async def receipt_times(self) -> dict[str, float]:
        """rcpt (reply address) -> when its receipt was delivered (s since the epoch)."""
        import email

        async with self.runtime.state_sessions() as session:
            rows = (await session.execute(
                select(OutboxMessage.raw, OutboxMessage.sent_ms).where(
                    OutboxMessage.kind == "receipt", OutboxMessage.status == "done")
            )).all()
        found = {}
        for raw, sent_ms in rows:
            reply_to = "".join(str(email.message_from_bytes(raw)["Reply-To"] or "").split())
            found[reply_to] = sent_ms / 1000
        return found


async def _sink(load: LoadGenerator, mails: list[tuple[str, bytes]], *, rate: int | None
                ) -> tuple[float, float]:
    """(messages/s with CLIENTS connections, p99 transaction ms at `rate`) of a bare sink."""
    port = _port()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: SMTPProtocol(_Sink()), "127.0.0.1", port)
    try:
        started = time.perf_counter()
        await load.send_all(port, mails, CLIENTS)
        per_second = len(mails) / (time.perf_counter() - started)
        p99 = 0.0
        if rate is not None:
            timed = await load.send_at_rate(port, mails[: rate * RATE_SECONDS], rate)
            p99 = _p99([spent for _, spent in timed.values()]) * 1000
        return per_second, p99
    finally:
        server.close()
        await server.wait_closed()


async def _run(names: set[str]) -> list[Figure]:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    count = int(os.environ.get("BENCH_MAIL_REPLIES", "300"))
    databases: dict[str, str] = {}
    names_pg: list[str] = []
    if os.environ.get("BENCH_MAIL_DATABASE") == "postgresql":
        base = PG_ADMIN_DSN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://")
        for variable in ("TIMEBOT_DATABASE_URL", "TIMEBOT_SERVICE_DATABASE_URL"):
            name = f"timebot_bench_{uuid.uuid4().hex[:12]}"
            await _pg(f'CREATE DATABASE "{name}"')
            names_pg.append(name)
            databases[variable] = f"{base}/{name}"
    try:
        return await _measure(names, count, databases)
    finally:
        for name in names_pg:
            await _pg(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def _measure(names: set[str], count: int, databases: dict[str, str]) -> list[Figure]:
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="bench-mail-") as tmp:
        world = World(Path(tmp), _key(), databases)
        load = LoadGenerator()
        await load.warm()
        await world.start()
        try:
            if "mail_replies_throughput" in names:
                note(f"setting up {count} submitted timesheets")
                mia_id, events = await world.timesheets(count)
                mails = world.replies(mia_id, events)
                sink_rate, _ = await _sink(load, mails, rate=None)
                started = time.perf_counter()
                await load.send_all(world.smtp_port, mails, CLIENTS)
                await world.wait_receipts(count)
                rate = count / (time.perf_counter() - started)
                note(f"{count} replies end to end in {count / rate:.2f} s; sink "
                     f"{sink_rate:.0f}/s")
                figures.append(Figure("mail_replies_throughput", rate, "replies/s", sink_rate))
            if "mail_replies_receipt_p99" in names:
                steady = RATE * RATE_SECONDS
                note(f"setting up {steady} submitted timesheets")
                mia_id, events = await world.timesheets(steady)
                mails = world.replies(mia_id, events)
                _, sink_p99 = await _sink(load, mails, rate=RATE)
                before = await world.receipts_delivered()
                sent = await load.send_at_rate(world.smtp_port, mails, RATE)
                await world.wait_receipts(before + steady)
                delivered = await world.receipt_times()
                latencies = [(delivered[rcpt] - start) * 1000 for rcpt, (start, _) in sent.items()]
                p99 = _p99(latencies)
                p50 = sorted(latencies)[len(latencies) // 2]
                note(f"receipt latency at {RATE}/s: p50 {p50:.0f} ms, p99 {p99:.0f} ms "
                     f"(goal: under 1000 ms); sink p99 {sink_p99:.1f} ms")
                figures.append(Figure("mail_replies_receipt_p99", p99, "ms", sink_p99))
        finally:
            await world.stop()
            load.close()
    return figures


def run(names: set[str]) -> list[Figure]:
    # uvloop, as `timebot serve` runs (uvicorn picks it when installed); the sink shares the loop.
    import uvloop

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(_run(names))
