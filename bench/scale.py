"""Large organisations (issue #26): the same paths at 100 people and at BENCH_SCALE_MAX
(default 1,000; 10,000 takes hours to seed on 2 cores) people, each figure the larger
size's value beside the 100's, measured from
outside a real `timebot serve` process (HTTP, /proc) on the seeded organisations of
bench.scale_seed (cached per size), on SQLite, or PostgreSQL when BENCH_MAIL_DATABASE=postgresql
(the figure names end in _sqlite / _postgresql).

- scale_review_cpu: CPU ms of `timebot serve` per person for the review fan-out of the
  seeded submissions (delivered once timebot has subscribed at its start), from the server
  answering until every review mail is out (one per person, else an error);
  scale_review_s: the seconds that took (the goal: 1,000 within 20 s with `--workers 2`;
  BENCH_SCALE_WORKERS sets the workers, default 1).
- scale_pending_p99: p99 ms of an approver's getPendingApprovals (their ten people).
- scale_week_p99: p99 ms of getTimeRecords of the approver's team for a week.
- scale_persons_p99: p99 ms of getPersons (the approver's key: the whole organisation);
  scale_persons_per_person: that p99 per person returned, µs (getPersons has no paging: the
  goal restated is a flat cost per person returned).
- scale_reminder_cpu: CPU ms of `timebot serve` per person for one sendTimesheetReminder of
  every employee (of the week after the submitted one), from the request until every
  reminder mail is in the outbox (the service's webhook, the mail half, the outbox);
  the count of reminder mails must equal the people.
- scale_rss: resident MB of `timebot serve` (the process tree) after the above.
- scale_period_reminder_cpu, scale_digest_cpu: CPU ms per end-of-period reminder and per daily
  digest of `timebot reminders send` (bench.scale_schedule), between the two starts.
- scale_home_p99, scale_reply_p99: the approver's Slack Home and one e-mail approval reply
  end to end, on a second start of `timebot serve` with the fronts (bench.scale_paths), once
  its start-up passes are done (the reconciler's and the scheduler's first, which a restart
  of a large organisation runs at once; the periodic ones are measured as they come).

p99s are medians over BENCH_SCALE_RUNS (default 3) runs of ROUNDS requests each: the machine
may be shared. BENCH_SCALE_SIZES="20,40" overrides both sizes (the test does).
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import func, select

from bench.busy import busy_machine
from bench.common import Figure, collector_paused, median, note
from bench.mail_load import free_port
from bench.mail_world import spawn
from bench.scale_paths import ALL_PENDING, SEED_DOMAIN, Fronts, Replies, home_p99, reply_p99
from bench.scale_schedule import outbox_count, scheduled_figures
from bench.scale_seed import DAY, WEEK, Org, _pg, _pg_url, drop, seeded
from bench.serve import cpu_seconds, kill_tree, serve_command, settled_cpu, until_ready
from plumbing.db import create_engine, session_factory
from service.timesheets.models import DELIVERY_PENDING, WebhookDelivery
from timebot.state.models import OutboxMessage, ReceivedEvent

NAMES = ("scale_review_cpu", "scale_review_s", "scale_pending_p99", "scale_week_p99",
         "scale_persons_p99", "scale_persons_per_person", "scale_reminder_cpu", "scale_rss",
         "scale_home_p99", "scale_reply_p99", "scale_period_reminder_cpu", "scale_digest_cpu")
FIGURES = tuple(f"{n}_{db}" for n in NAMES for db in ("sqlite", "postgresql"))
ROUNDS = 100
HOME_ROUNDS = 50
REPLY_ROUNDS = 20

PENDING = """{ getPendingApprovals { person { id name } submitId status currentStage
  totalDuration pendingApprovers { id name } startTime { ts } endTime { ts } } }"""
WEEK_RECORDS = """query($s: SvcTimestamp!, $e: SvcTimestamp!, $p: [SvcId]) {
  getTimeRecords(startTime: $s, endTime: $e, filter: [{personIds: $p}]) {
  id startTime { ts } duration person { id } } }"""
PERSONS = "{ getPersons { id name email role { id } } }"
REMIND = """mutation($p: [SvcId!]!, $s: SvcTimestamp!, $e: SvcTimestamp!) {
  sendTimesheetReminder(personIds: $p, startTime: $s, endTime: $e) }"""


def database() -> str:
    return "postgresql" if os.environ.get("BENCH_MAIL_DATABASE") == "postgresql" else "sqlite"


def sizes() -> tuple[int, int]:
    if os.environ.get("BENCH_SCALE_SIZES"):
        small, large = os.environ["BENCH_SCALE_SIZES"].split(",")
        return int(small), int(large)
    return 100, int(os.environ.get("BENCH_SCALE_MAX", "1000"))


def rss_mb(pid: int) -> float:
    """VmRSS of a process and its descendants, MB."""
    from bench.serve import _descendants

    total = 0
    for each in [pid, *_descendants(pid)]:
        try:
            for line in Path(f"/proc/{each}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


class Serve:
    """`timebot serve` on a copy of the seeded organisation."""

    def __init__(self, root: Path, service_url: str, state_url: str, workers: int,
                 fronts: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = root / "timebot.log"
        (root / "data").mkdir(exist_ok=True)
        self.state_url = state_url
        self.env = {**{k: v for k, v in os.environ.items() if not k.startswith("TIMEBOT_")},
                    "TIMEBOT_DATA_DIR": str(root / "data"), "TIMEBOT_HTTP_PORT": str(self.port),
                    "TIMEBOT_HTTP_HOST": "127.0.0.1", "TIMEBOT_SMTP_PORT": "0",
                    "TIMEBOT_SECRET_KEY": secrets.token_urlsafe(48),
                    "TIMEBOT_SERVICE_DATABASE_URL": service_url,
                    "TIMEBOT_DATABASE_URL": state_url, **(fronts or {})}
        self.service_url = service_url
        self.workers = workers
        self.http = httpx.AsyncClient(timeout=120)
        self.process: subprocess.Popen[bytes] | None = None

    async def start(self) -> None:
        self.process = spawn(serve_command(self.workers), self.env, self.log)
        await until_ready(self.process, self.http, self.base, self.log, self.workers, 1200)
        self.service_engine = create_engine(self.service_url, read_only=True)
        self.state_engine = create_engine(self.state_url, read_only=True)

    async def stop(self) -> None:
        await self.http.aclose()
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                kill_tree(self.process)
        for engine in (getattr(self, "service_engine", None),
                       getattr(self, "state_engine", None)):
            if engine is not None:
                await engine.dispose()

    async def gql(self, key: str, query: str, variables: dict[str, Any] | None = None) -> Any:
        response = await self.http.post(f"{self.base}/graphql", headers={"apikey": key},
                                         json={"query": query, "variables": variables or {}})
        body = response.json()
        if body.get("errors") or body.get("permissionsErrors"):
            raise RuntimeError(str(body)[:500])
        return body["data"]

    async def p99(self, key: str, query: str, variables: dict[str, Any] | None = None) -> float:
        for _ in range(5):  # warm
            await self.gql(key, query, variables)
        samples = []
        with busy_machine(), collector_paused():
            for _ in range(ROUNDS):
                started = time.perf_counter()
                await self.gql(key, query, variables)
                samples.append((time.perf_counter() - started) * 1000)
        samples.sort()
        return samples[min(len(samples) - 1, int(len(samples) * 0.99))]

    async def reminders(self, kind: str = "timesheet-reminder") -> int:
        return await outbox_count(self.state_engine, kind)

    async def settled(self) -> bool:
        async with session_factory(self.service_engine)() as session:
            pending = await session.scalar(select(func.count()).select_from(
                WebhookDelivery).where(WebhookDelivery.status == DELIVERY_PENDING))
        async with session_factory(self.state_engine)() as session:
            events = await session.scalar(select(func.count()).select_from(
                ReceivedEvent).where(ReceivedEvent.status.in_(("queued", "working"))))
            outgoing = await session.scalar(select(func.count()).select_from(
                OutboxMessage).where(OutboxMessage.status.in_(("queued", "working"))))
        return not (pending or events or outgoing)


async def _wait(condition: Any, what: str, limit_s: float = 900) -> None:
    deadline = time.perf_counter() + limit_s
    while not await condition():
        if time.perf_counter() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        await asyncio.sleep(0.1)


async def _state_url(root: Path) -> str:
    if database() != "postgresql":
        return f"sqlite+aiosqlite:///{root / 'data' / 'bot.db'}"
    name = f"timebot_bench_{uuid.uuid4().hex[:12]}"
    await _pg(f'CREATE DATABASE "{name}"')
    return _pg_url(name)


async def measure(people: int, runs: int) -> dict[str, float]:
    """Every figure's value at one size."""
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        root = Path(tmp)
        org, service_url = await seeded(people, database(), root)
        state_url = await _state_url(root)
        workers = int(os.environ.get("BENCH_SCALE_WORKERS", "1"))
        serve = Serve(root, service_url, state_url, workers)
        fronts: Fronts | None = None
        try:
            await serve.start()
            values = await _figures(serve, org, runs)
            listed = (await serve.gql(org.admin_key, ALL_PENDING))["getPendingApprovals"]
            approvers = sorted({str(a["id"]) for item in listed
                                for a in item.get("pendingApprovers") or []})
            active = len((await serve.gql(org.admin_key, PERSONS))["getPersons"])
            await serve.stop()
            values.update(await scheduled_figures(serve.env, state_url, org, approvers, active,
                                                  root / "reminders.log"))
            fronts = Fronts(root, f"a0@{SEED_DOMAIN}")
            # A restart keeps its secret key: the keys stored so far stay readable.
            serve = Serve(root, service_url, state_url, workers, {
                **fronts.env(), "TIMEBOT_SECRET_KEY": serve.env["TIMEBOT_SECRET_KEY"]})
            await serve.start()
            assert serve.process is not None
            await settled_cpu(serve.process.pid, "the fronts' start")
            return {**values, **await _front_figures(serve, fronts, org, runs)}
        finally:
            await serve.stop()
            if fronts is not None:
                fronts.close()
            await drop(service_url)
            await drop(state_url)


async def _front_figures(serve: Serve, fronts: Fronts, org: Org, runs: int
                         ) -> dict[str, float]:
    pending = (await serve.gql(org.admin_key, ALL_PENDING))["getPendingApprovals"]
    replies = Replies(pending, org)
    rounds = replies.rounds(REPLY_ROUNDS, runs)
    home: list[float] = []
    reply: list[float] = []
    for _ in range(runs):
        with busy_machine(), collector_paused():
            home.append(await home_p99(serve.base, fronts, HOME_ROUNDS))
            reply.append(await reply_p99(fronts, replies, serve.env["TIMEBOT_SECRET_KEY"],
                                         serve.state_engine, rounds))
    note(f"{org.people} people: Home p99s {[round(v) for v in home]} ms, reply p99s "
         f"{[round(v) for v in reply]} ms ({rounds} replies a run)")
    return {"scale_home_p99": median(home), "scale_reply_p99": median(reply)}


async def _reviews(serve: Serve, org: Org) -> dict[str, float]:
    assert serve.process is not None
    before, started = cpu_seconds(serve.process.pid), time.perf_counter()

    async def all_out() -> bool:
        return await serve.reminders("review") >= len(org.employees) and await serve.settled()

    with busy_machine():
        # A shared machine can be slow: a second or more a review mail (see the report).
        await _wait(all_out, "the review mails", max(900.0, len(org.employees) * 3.0))
    elapsed = time.perf_counter() - started
    sent = await serve.reminders("review")
    if sent != len(org.employees):
        raise RuntimeError(f"{sent} review mails for {len(org.employees)} submissions")
    return {"scale_review_cpu": (cpu_seconds(serve.process.pid) - before) * 1000 / sent,
            "scale_review_s": elapsed}


async def _figures(serve: Serve, org: Org, runs: int) -> dict[str, float]:
    reviews = await _reviews(serve, org)
    note(f"{org.people} people: review fan-out {reviews['scale_review_cpu']:.1f} ms CPU a "
         f"person, {reviews['scale_review_s']:.1f} s (load {os.getloadavg()[0]:.1f})")
    assert serve.process is not None
    await settled_cpu(serve.process.pid, "the review fan-out")
    found: dict[str, list[float]] = {n: [] for n in NAMES[2:5]}
    persons = len((await serve.gql(org.approver_key, PERSONS))["getPersons"])
    week = {"s": WEEK, "e": WEEK + 7 * DAY, "p": org.team}
    listed = await serve.gql(org.approver_key, PENDING)
    records = await serve.gql(org.approver_key, WEEK_RECORDS, week)
    note(f"{org.people} people: {len(listed['getPendingApprovals'])} pending for the approver, "
         f"{len(records['getTimeRecords'])} records in the team's week")
    for _ in range(runs):
        found["scale_pending_p99"].append(await serve.p99(org.approver_key, PENDING))
        found["scale_week_p99"].append(await serve.p99(org.approver_key, WEEK_RECORDS, week))
        found["scale_persons_p99"].append(await serve.p99(org.approver_key, PERSONS))
    values = {**reviews, **{name: median(samples) for name, samples in found.items()}}
    values["scale_persons_per_person"] = values["scale_persons_p99"] * 1000 / persons
    assert serve.process is not None
    before, started = cpu_seconds(serve.process.pid), time.perf_counter()
    with busy_machine():
        await serve.gql(org.admin_key, REMIND, {"p": org.employees, "s": WEEK + 7 * DAY,
                                                "e": WEEK + 14 * DAY})  # not submitted

        async def all_sent() -> bool:
            return await serve.reminders() >= len(org.employees) and await serve.settled()

        await _wait(all_sent, "the reminders")
    cpu = cpu_seconds(serve.process.pid) - before
    sent = await serve.reminders()
    if sent != len(org.employees):
        raise RuntimeError(f"{sent} reminder mails for {len(org.employees)} people")
    values["scale_reminder_cpu"] = cpu * 1000 / len(org.employees)
    values["scale_rss"] = rss_mb(serve.process.pid)
    note(f"{org.people} people: " + ", ".join(f"{k} {v:.2f}" for k, v in values.items())
         + f"; reminders {sent} in {time.perf_counter() - started:.1f} s")
    return values


def run(names: set[str]) -> list[Figure]:
    small, large = sizes()
    runs = int(os.environ.get("BENCH_SCALE_RUNS", "3"))
    units = {"scale_reminder_cpu": "ms/person", "scale_review_cpu": "ms/person",
             "scale_period_reminder_cpu": "ms/person", "scale_digest_cpu": "ms/approver",
             "scale_review_s": "s", "scale_rss": "MB", "scale_persons_per_person": "us"}
    db = database()
    wanted = [n for n in NAMES if f"{n}_{db}" in names]
    if not wanted:
        return []
    low = asyncio.run(measure(small, runs))
    high = asyncio.run(measure(large, runs))
    return [Figure(f"{n}_{db}", high[n], units.get(n, "ms"), low[n]) for n in wanted]
