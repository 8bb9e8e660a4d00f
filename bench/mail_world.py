"""timebot as the mail benchmarks measure it: `timebot serve` in a process of its own, in its
production configuration (the defaults: webhook subscription on, default logging to stderr),
on databases the bench seeds and reads from outside: `running_timebot` starts one with N
workers on fresh databases (SQLite files in a fresh directory; new PostgreSQL databases, dropped
after, when BENCH_MAIL_DATABASE=postgresql: on the server of TIMEBOT_TEST_PG, default
postgresql://postgres@127.0.0.1:5432/postgres) and stops it.

BENCH_LOG names a file to keep timebot's log in; BENCH_PROFILE one for a cProfile of it;
BENCH_PROFILE_REPLIES one for a cProfile of its main thread during the throughput run's replies
alone (one worker; started and written on SIGUSR1 and SIGUSR2), for diagnosis.
BENCH_DIAGNOSE=tasks|statements|compiles (report to BENCH_DIAGNOSE_OUT, default diagnosis.txt)
the same phase's CPU by asyncio task, SQLite's work by statement, or the statements SQLAlchemy
compiled anew (bench.diagnose).
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import func, select

from bench.common import note
from bench.diagnose import diagnosed_program
from bench.mail_load import DOMAIN, SENDER_DOMAIN, Key, Mail, free_port, signed_reply
from bench.reply_mail import styles
from bench.serve import cpu_seconds, kill_tree, serve_command, until_ready
from plumbing.clock import SYSTEM_CLOCK
from plumbing.db import create_engine, session_factory, unit_of_work
from service.db import migrate
from service.organisation.provisioning import add_person, create_organisation
from service.timesheets.models import DELIVERY_PENDING, IntegrationWebhook, WebhookDelivery
from timebot.notify.reviews import review_dedupe_key
from timebot.secret_key.tokens import period_hint
from timebot.state.models import OutboxMessage, ReceivedEvent

WEEK0 = 1_735_516_800_000  # Monday 30 December 2024, 00:00 UTC
DAY_MS = 86_400_000
HOUR_MS = 3_600_000
BUSY = ("queued", "working")
PG_ADMIN_DSN = os.environ.get("TIMEBOT_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")


# `timebot serve` with a cProfile of its main thread between SIGUSR1 and SIGUSR2.
_PHASE_PROFILE = (
    "import cProfile, signal; from shell.cli import main; profile = cProfile.Profile(); "
    "signal.signal(signal.SIGUSR1, lambda *_: profile.enable()); "
    "signal.signal(signal.SIGUSR2, lambda *_: (profile.disable(), "
    "profile.dump_stats({path!r}))); main()"
)


def spawn(args: list[str], env: dict[str, str] | None, log_path: Path
          ) -> subprocess.Popen[bytes]:
    """A process whose stdout and stderr go to `log_path`."""
    with log_path.open("wb") as log:
        return subprocess.Popen(args, env=env, stdout=log, stderr=log)


class TimebotProcess:
    def __init__(self, root: Path, key: Key, databases: dict[str, str], workers: int) -> None:
        self.root = root
        self.key = key
        self.workers = workers
        self.smtp_port = free_port()
        self.http_port = free_port()
        (root / "data").mkdir(exist_ok=True)
        txt = root / "dkim.txt"
        txt.write_text(key.txt_line + "\n")
        self.secret = secrets.token_urlsafe(48)
        self.env = {
            **os.environ,
            "TIMEBOT_DATA_DIR": str(root / "data"),
            "TIMEBOT_HTTP_PORT": str(self.http_port),
            "TIMEBOT_HTTP_HOST": "127.0.0.1",
            "TIMEBOT_SMTP_PORT": str(self.smtp_port),
            "TIMEBOT_MAIL_DOMAIN": DOMAIN,
            "TIMEBOT_DKIM_TXT_FILE": str(txt),
            "TIMEBOT_SECRET_KEY": self.secret,
            **databases,
        }
        data = root / "data"
        self.service_url = databases.get("TIMEBOT_SERVICE_DATABASE_URL") or \
            f"sqlite+aiosqlite:///{data / 'service.db'}"
        self.state_url = databases.get("TIMEBOT_DATABASE_URL") or \
            f"sqlite+aiosqlite:///{data / 'bot.db'}"
        self.base = f"http://127.0.0.1:{self.http_port}"
        self.log_path = root / "timebot.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.http = httpx.AsyncClient(timeout=60)
        self.org_id = self.admin_key = self.bob_id = self.bob_key = ""
        self.mia_id = self.mia_email = ""
        self._weeks = 0

    async def seed(self) -> None:
        """The organisation, Bob and his manager Mia, written before timebot starts."""
        engine = create_engine(self.service_url)
        await migrate(engine)
        now = SYSTEM_CLOCK.now_ms()
        async with unit_of_work(session_factory(engine)) as session:
            created = await create_organisation(session, f"Bench {uuid.uuid4().hex[:6]}",
                                                "Ada", "ada@bench.example", now)
            org = created.organisation.id
            bob, self.bob_key = await add_person(session, org, "Bob",
                                                 f"bob.{uuid.uuid4().hex[:6]}@{SENDER_DOMAIN}",
                                                 "employee", now)
            mia, _ = await add_person(session, org, "Mia",
                                      f"mia.{uuid.uuid4().hex[:6]}@{SENDER_DOMAIN}",
                                      "manager", now)
        await engine.dispose()
        self.org_id, self.admin_key = org, created.apikey
        self.bob_id, self.mia_id, self.mia_email = bob.id, mia.id, mia.email

    async def start(self) -> None:
        await self.seed()
        args = serve_command(self.workers)
        if os.environ.get("BENCH_PROFILE"):  # cProfile timebot into that file, for diagnosis
            args = serve_command(self.workers, "import cProfile; from shell.cli import main; "
                                 f"cProfile.run('main()', {os.environ['BENCH_PROFILE']!r})")
        elif os.environ.get("BENCH_PROFILE_REPLIES"):
            args = serve_command(self.workers, _PHASE_PROFILE.format(
                path=os.environ["BENCH_PROFILE_REPLIES"]))
        elif os.environ.get("BENCH_DIAGNOSE"):  # bench.diagnose, for diagnosis
            args = serve_command(self.workers, diagnosed_program())
        self.process = spawn(args, self.env, self.log_path)
        await until_ready(self.process, self.http, self.base, self.log_path, self.workers, 600)
        # The bench only reads timebot's databases: read-only engines, whose transactions on
        # SQLite begin deferred and never take the write lock timebot's writers wait for.
        self.service_engine = create_engine(self.service_url, read_only=True)
        self.state_engine = create_engine(self.state_url, read_only=True)
        await self._wait(self._subscribed, "the webhook subscription")
        admin = self.admin_key
        await self.gql(admin, "mutation($m: SvcId!, $p: SvcId!) { makeManagerOfPerson("
                       "managerId: $m, personId: $p) { id } }",
                       {"m": self.mia_id, "p": self.bob_id})
        await self.gql(admin, "mutation($s: [SvcApprovalStageInput]) { "
                       "editOrganisationApprovalStages(stages: $s) { id } }",
                       {"s": [{"type": "ppm"}]})

    async def stop(self) -> None:
        await self.http.aclose()
        if self.process is not None and self.process.poll() is None:
            # uvicorn re-raises the signal after its shutdown: SIGINT lets cProfile write.
            self.process.send_signal(signal.SIGINT if os.environ.get("BENCH_PROFILE")
                                     else signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                note("timebot serve did not stop within 30 s of SIGTERM, killed; its log ends: "
                     + self.log_path.read_text()[-1000:])
                kill_tree(self.process)
        if os.environ.get("BENCH_LOG"):  # keep timebot's log, for diagnosis
            shutil.copyfile(self.log_path, os.environ["BENCH_LOG"])
        for engine in (getattr(self, "service_engine", None),
                       getattr(self, "state_engine", None)):
            if engine is not None:
                await engine.dispose()

    async def _wait(self, condition: Any, what: str, limit_s: float = 600) -> None:
        deadline = time.perf_counter() + limit_s
        while not await condition():
            if time.perf_counter() > deadline:
                raise RuntimeError(f"timed out waiting for {what}")
            await asyncio.sleep(0.05)

    async def _subscribed(self) -> bool:
        async with session_factory(self.service_engine)() as session:
            return bool(await session.scalar(select(func.count()).select_from(
                IntegrationWebhook).where(IntegrationWebhook.organisation_id == self.org_id)))

    async def settled(self) -> bool:
        """Nothing left to deliver, dispatch or send (what the setup set off is done)."""
        async with session_factory(self.service_engine)() as session:
            pending = await session.scalar(select(func.count()).select_from(
                WebhookDelivery).where(WebhookDelivery.status == DELIVERY_PENDING))
        async with session_factory(self.state_engine)() as session:
            events = await session.scalar(select(func.count()).select_from(
                ReceivedEvent).where(ReceivedEvent.status.in_(BUSY)))
            outgoing = await session.scalar(select(func.count()).select_from(
                OutboxMessage).where(OutboxMessage.status.in_(BUSY)))
        return not (pending or events or outgoing)

    async def wait_settled(self) -> None:
        await self._wait(self.settled, "the setup's events and mail")

    async def gql(self, key: str, query: str, variables: dict[str, Any]) -> Any:
        response = await self.http.post(f"{self.base}/graphql",
                                        json={"query": query, "variables": variables},
                                        headers={"apikey": key})
        body = response.json()
        if body.get("errors") or body.get("permissionsErrors"):
            raise RuntimeError(str(body))
        return body["data"]

    async def timesheets(self, count: int) -> list[str]:
        """`count` submitted weekly timesheets of Bob, waiting for Mia: their submit ids."""
        semaphore = asyncio.Semaphore(8)

        async def week(index: int) -> str:
            start = WEEK0 + index * 7 * DAY_MS
            async with semaphore:
                await self.gql(self.bob_key, "mutation($s: SvcTimestamp!, $p: SvcId!) { "
                               "addTimeRecord(startTime: $s, duration: 28800000, personId: $p)"
                               " { id } }", {"s": start + DAY_MS + 9 * HOUR_MS, "p": self.bob_id})
                data = await self.gql(self.bob_key, "mutation($p: SvcId!, $s: SvcTimestamp!, "
                                      "$e: SvcTimestamp!) { submitTimesheet(personId: $p, "
                                      "startTime: $s, endTime: $e) { id submitId } }",
                                      {"p": self.bob_id, "s": start, "e": start + 7 * DAY_MS})
            event = data["submitTimesheet"]
            return str(event["submitId"] or event["id"])

        events = list(await asyncio.gather(*(week(self._weeks + i) for i in range(count))))
        self._weeks += count
        return events

    async def replies(self, events: list[str]) -> list[Mail]:
        """Mia's reply to each event's review request, as her mail client writes it
        (bench.reply_mail: a comment, a signature, the review quoted; Gmail's and Outlook's
        in turn unless BENCH_REPLY_STYLE says otherwise): to its Reply-To (the token of its
        Message-ID), In-Reply-To its Message-ID. (The setup must have settled: the review
        requests are in the outbox.)"""
        keys = {review_dedupe_key(event, 0, self.mia_id): event for event in events}
        async with session_factory(self.state_engine)() as session:
            found = {key: (message_id, raw) for key, message_id, raw in (await session.execute(
                select(OutboxMessage.dedupe_key, OutboxMessage.message_id, OutboxMessage.raw)
                .where(OutboxMessage.dedupe_key.in_(list(keys))))).tuples().all()}
        missing = [keys[key] for key in keys if not found.get(key)]
        if missing:
            raise RuntimeError(f"no review request for {len(missing)} of the timesheets")
        mails = []
        hinted = 0
        for index, (key, style) in enumerate(zip(keys, styles(len(keys)), strict=True)):
            review_id, review = str(found[key][0]), bytes(found[key][1])
            token = review_id.strip("<>").split(".", 1)[0]
            hinted += period_hint([("In-Reply-To", review_id)], token, DOMAIN) is not None
            mails.append(signed_reply(self.key, self.mia_email, token, in_reply_to=review_id,
                                      review=review, style=style, index=index))
        note(f"replies to {len(mails)} review mails, {hinted} of them with the period hint")
        return mails

    async def receipts_delivered(self) -> int:
        async with session_factory(self.state_engine)() as session:
            return int(await session.scalar(
                select(func.count()).select_from(OutboxMessage).where(
                    OutboxMessage.kind == "receipt", OutboxMessage.status == "done")
            ) or 0)

    async def wait_receipts(self, total: int) -> None:
        async def enough() -> bool:
            return await self.receipts_delivered() >= total

        await self._wait(enough, "the receipts")

    async def receipt_times(self) -> dict[str, float]:
        """rcpt (reply address) -> when its receipt was delivered (s since the epoch)."""
        import email

        async with session_factory(self.state_engine)() as session:
            rows = (await session.execute(
                select(OutboxMessage.raw, OutboxMessage.sent_ms).where(
                    OutboxMessage.kind == "receipt", OutboxMessage.status == "done")
            )).all()
        found = {}
        for raw, sent_ms in rows:
            reply_to = "".join(str(email.message_from_bytes(raw)["Reply-To"] or "").split())
            found[reply_to] = (sent_ms or 0) / 1000
        return found

    def profile(self, on: bool) -> None:
        """Starts (True) or stops and writes (False) BENCH_PROFILE_REPLIES's profile (or
        BENCH_DIAGNOSE's report)."""
        phased = os.environ.get("BENCH_PROFILE_REPLIES") or os.environ.get("BENCH_DIAGNOSE")
        if phased and self.process is not None:
            self.process.send_signal(signal.SIGUSR1 if on else signal.SIGUSR2)

    def sample_with_py_spy(self) -> subprocess.Popen[bytes] | None:
        """py-spy sampling timebot into BENCH_PY_SPY (collapsed stacks), when that is set."""
        target = os.environ.get("BENCH_PY_SPY")
        if not target or self.process is None:
            return None
        spy = Path(sys.executable).with_name("py-spy")
        return subprocess.Popen([str(spy), "record", "-p", str(self.process.pid), "-f", "raw",
                                 "-o", target, "-r", "200", "--subprocesses"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def cpu(self) -> float:
        """CPU seconds of timebot so far (the supervisor and every worker)."""
        assert self.process is not None
        return cpu_seconds(self.process.pid)

    def log_lines(self) -> int:
        with self.log_path.open("rb") as log:
            return sum(1 for _ in log)

    async def requests(self) -> dict[str, float]:
        """HTTP requests handled so far, by route (from /metrics)."""
        text = (await self.http.get(f"{self.base}/metrics")).text
        counts: dict[str, float] = {}
        for route, value in re.findall(
            r'timebot_http_requests_total\{[^}]*route="([^"]*)"[^}]*\} ([0-9.e+]+)', text
        ):
            counts[route] = counts.get(route, 0) + float(value)
        return counts


async def _pg(statement: str, database: str | None = None) -> None:
    """Run `statement` on the server of PG_ADMIN_DSN, in its database or in `database`."""
    import asyncpg

    dsn = PG_ADMIN_DSN if database is None else f"{PG_ADMIN_DSN.rsplit('/', 1)[0]}/{database}"
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


async def analyse(databases: dict[str, str]) -> None:
    """ANALYZE each of these PostgreSQL databases, as autovacuum does on a production server
    once enough rows changed. The tests' server runs with autovacuum off (CI's configuration):
    without this its planner would plan on no statistics at all, as no production server does
    (read every person of the organisation to find six by their key, 0.5 ms against 0.05)."""
    for url in databases.values():
        await _pg("ANALYZE", url.rsplit("/", 1)[1])


@asynccontextmanager
async def fresh_databases(postgresql: bool | None = None) -> AsyncIterator[dict[str, str]]:
    """timebot's database variables: two new PostgreSQL databases (dropped after) when
    `postgresql` (by default: BENCH_MAIL_DATABASE=postgresql), else none (SQLite files in the
    data directory)."""
    databases: dict[str, str] = {}
    if postgresql is None:
        postgresql = os.environ.get("BENCH_MAIL_DATABASE") == "postgresql"
    if not postgresql:
        yield databases
        return
    base = PG_ADMIN_DSN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://")
    names: list[str] = []
    try:
        for variable in ("TIMEBOT_DATABASE_URL", "TIMEBOT_SERVICE_DATABASE_URL"):
            name = f"timebot_bench_{uuid.uuid4().hex[:12]}"
            await _pg(f'CREATE DATABASE "{name}"')
            names.append(name)
            databases[variable] = f"{base}/{name}"
        yield databases
    finally:
        for name in names:
            await _pg(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@asynccontextmanager
async def running_timebot(key: Key, workers: int) -> AsyncIterator[TimebotProcess]:
    """`timebot serve --workers N` started (seeded, every worker up) on fresh databases in a
    fresh directory; stopped, its directory and databases gone, after the block."""
    async with fresh_databases() as databases:
        with tempfile.TemporaryDirectory(prefix="bench-mail-") as tmp:
            world = TimebotProcess(Path(tmp), key, databases, workers)
            try:
                await world.start()
                yield world
            finally:
                await world.stop()
