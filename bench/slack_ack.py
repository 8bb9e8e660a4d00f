"""The Slack app under load.

- slack_ack_p99: p99 ms from sending a signed `/timesheet remind` to timebot's HTTP answer (the
  ack), at 100 requests per second open-loop (BENCH_SLACK_SECONDS, default 10 s), beside a
  bare slack-bolt app that acks and does nothing, under the same load in the same run. Both
  run in their own process (`timebot serve` with an embedded service on SQLite, and uvicorn
  with the bare app); each command's work (identity, GraphQL, the answer to response_url)
  goes on after the ack in timebot. Goal: under 100 ms (Slack's limit is 3 s).
- slack_ack_p50: the median of the same.
- slack_ack_p99_workers2: slack_ack_p99 of `timebot serve --workers 2` (issue #18), beside the
  same bare bolt app. Goal: under 100 ms.
- slack_sender_10000: seconds to deliver 10,000 DMs (one per person, durable queue on SQLite)
  through the rate-limited sender to a fake Slack that answers 429 to anything faster than one
  message per second per channel, beside the time the workspace rate alone allows
  (10,000 / BENCH_SLACK_RATE, default 250 messages/s): ratio 1 is the best possible.

Each `timebot serve` starts afresh, in a data directory of its own, once all its workers are
up. BENCH_BUSY=N takes every figure on a busy machine (bench.busy).
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import httpx

from bench.busy import busy_machine
from bench.common import Figure, median, note
from bench.serve import kill_tree, serve_command, timebot_command, workers_started
from tests.bot.slack.fake_slack import FakeSlack
from tests.bot.slack.signing import SlackRequests
from tests.net import free_port

FIGURES = ("slack_ack_p99", "slack_ack_p50", "slack_ack_p99_workers2", "slack_sender_10000")
SECRET = "bench-signing-secret"
TOKEN = "xoxb-bench"
ADMIN_EMAIL = "ada@bench.example"
RATE = 100.0  # requests per second

BARE_APP = """
import sys, uvicorn
from slack_bolt.async_app import AsyncApp
from slack_bolt.adapter.starlette.async_handler import AsyncSlackRequestHandler
from slack_sdk.web.async_client import AsyncWebClient
from starlette.applications import Starlette
from starlette.routing import Route

app = AsyncApp(client=AsyncWebClient(token=sys.argv[3], base_url=sys.argv[2]),
               signing_secret=sys.argv[4])

@app.command("/timesheet")
async def ack_only(ack):
    await ack()

handler = AsyncSlackRequestHandler(app)

async def events(request):
    return await handler.handle(request)

uvicorn.run(Starlette(routes=[Route("/slack/events", events, methods=["POST"])]),
            host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False)
"""


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def wait_up(url: str, process: subprocess.Popen[bytes]) -> None:
    with httpx.Client() as http:
        for _ in range(600):
            if process.poll() is not None:
                raise RuntimeError(f"{url}: the process exited with {process.returncode}")
            try:
                http.post(url, content=b"")
                return
            except httpx.HTTPError:
                time.sleep(0.1)
    raise RuntimeError(f"{url} did not come up")


def spawn(args: list[str], env: dict[str, str] | None = None, log_path: Path | None = None
          ) -> subprocess.Popen[bytes]:
    """A process whose output goes to `log_path` (nowhere without one)."""
    if log_path is None:
        return subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    with log_path.open("wb") as log:
        return subprocess.Popen(args, env=env, stdout=log, stderr=log)


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            note(f"{process.args!r} did not stop within 30 s of SIGTERM, killed")
            kill_tree(process)


async def load(url: str, fake: FakeSlack, user: str, seconds: float) -> list[float]:
    """Open loop: one signed command every 1/RATE s, whatever the answers take; ms each."""
    latencies: list[float] = []
    limits = httpx.Limits(max_connections=500, max_keepalive_connections=500)
    async with httpx.AsyncClient(timeout=10, limits=limits) as http:
        slack = SlackRequests(http, url, SECRET, fake)

        async def one() -> None:
            started = time.perf_counter()
            response = await slack.command("/timesheet", "remind", user=user)
            elapsed = (time.perf_counter() - started) * 1000
            if response.status_code != 200:
                raise RuntimeError(f"HTTP {response.status_code}: {response.text}")
            latencies.append(elapsed)

        for _ in range(20):  # warm-up: connections, caches
            await one()
        latencies.clear()
        tasks = []
        origin = time.perf_counter()
        for index in range(int(seconds * RATE)):
            delay = origin + index / RATE - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one()))
        await asyncio.gather(*tasks)
    return latencies


def answered(fake: FakeSlack) -> int:
    """How many commands the fake Slack got an answer to through response_url."""
    with httpx.Client() as http:
        return int(http.get(f"{fake.base_url}/count/response_url").json()["count"])


def measure_timebot(fake: FakeSlack, workers: int, seconds: float) -> list[float]:
    """The acks of `timebot serve --workers N` with an embedded service, in a fresh data
    directory, under the load (ms each)."""
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        env = {**os.environ, "TIMEBOT_DATA_DIR": tmp, "TIMEBOT_HTTP_PORT": str(port),
               "TIMEBOT_SMTP_PORT": "0", "SLACK_BOT_TOKEN": TOKEN,
               "SLACK_SIGNING_SECRET": SECRET, "TIMEBOT_SLACK_API_URL": fake.api_url,
               "TIMEBOT_SECRET_KEY": secrets.token_urlsafe(48)}
        created = json.loads(subprocess.run(
            timebot_command("service", "init", "--org", "Bench", "--admin-name", "Ada",
                            "--admin-email", ADMIN_EMAIL),
            env=env, check=True, capture_output=True).stdout)
        if created["admin"]["email"] != ADMIN_EMAIL:  # the fake Slack's UADA
            raise RuntimeError(f"the admin is {created['admin']['email']}")
        log_path = Path(tmp) / "timebot.log"
        process = spawn(serve_command(workers), env, log_path)
        try:
            url = f"http://127.0.0.1:{port}/slack/events"
            wait_up(url, process)
            for _ in range(600):
                if workers_started(log_path) >= workers or process.poll() is not None:
                    break
                time.sleep(0.1)
            time.sleep(2.0)  # start-up work (migrations, webhook subscription) done
            note(f"slack_ack: {RATE:.0f} requests/s for {seconds:.0f} s, timebot with "
                 f"{workers} worker(s)")
            before = answered(fake)
            with busy_machine():
                acks = asyncio.run(load(url, fake, "UADA", seconds))
            done = 0
            for _ in range(150):  # let the commands' work finish, to report it
                done = answered(fake) - before
                if done >= len(acks) + 20:  # the warm-up's too
                    break
                time.sleep(0.2)
            note(f"slack_ack: timebot answered {done} commands through response_url")
            return acks
        finally:
            stop(process)


def measure_ack(seconds: float, worker_counts: list[int]
                ) -> tuple[dict[int, list[float]], list[float]]:
    """The acks of timebot with each of `worker_counts` workers, and of the bare app. The fake
    Slack, the bare app and each timebot run in their own process; this one only sends the
    load."""
    processes: list[subprocess.Popen[bytes]] = []
    try:
        fake = FakeSlack(free_port())  # its address; it runs in its own process
        processes.append(spawn([sys.executable, "-m", "tests.bot.slack.fake_slack",
                                str(fake.port), f"UADA={ADMIN_EMAIL}"]))
        wait_up(f"{fake.base_url}/response/up", processes[-1])
        # The bare app first, alone on the machine; then each timebot, alone too.
        bare_port = free_port()
        processes.append(spawn([sys.executable, "-c", BARE_APP, str(bare_port),
                                fake.api_url, TOKEN, SECRET]))
        bare_url = f"http://127.0.0.1:{bare_port}/slack/events"
        wait_up(bare_url, processes[-1])
        note(f"slack_ack: {RATE:.0f} requests/s for {seconds:.0f} s, bare bolt app")
        with busy_machine():
            bare = asyncio.run(load(bare_url, fake, "UADA", seconds))
        stop(processes[-1])
        return {workers: measure_timebot(fake, workers, seconds)
                for workers in worker_counts}, bare
    finally:
        for process in processes:
            stop(process)


async def measure_sender(count: int, rate: float) -> float:
    from bot.slack.pacing import RateLimits
    from bot.slack.sender import SlackSender
    from plumbing.clock import SYSTEM_CLOCK
    from timebot.state.db import create_engine, migrate, session_factory

    fake = await FakeSlack.start()
    fake.enforce_channel_rate(1.0)
    with tempfile.TemporaryDirectory() as tmp:
        engine = create_engine(f"sqlite+aiosqlite:///{Path(tmp) / 'bot.db'}")
        await migrate(engine)
        from bot.slack.app import close_keep_alive, keep_alive, web_client

        client = web_client(TOKEN, fake.api_url)
        keep_alive(client)  # as the Slack component does when timebot starts
        sender = SlackSender(session_factory(engine), client, SYSTEM_CLOCK,
                             RateLimits(workspace_per_second=rate))
        messages: list[tuple[str, str, Any, str | None]] = [
            (f"U{n:08d}", "Please submit your timesheet.", None, f"bench:{n}")
            for n in range(count)
        ]
        # Half of the people get a second message (e.g. a thread reply): per-channel pacing.
        messages += [(f"U{n:08d}", "A second line.", None, f"bench2:{n}")
                     for n in range(0, count, 2)]
        with busy_machine():
            started = time.perf_counter()
            await sender.post_many(messages)
            sender.worker.start()
            for _ in range(100_000):
                if not await sender.pending():
                    break
                await asyncio.sleep(0.5)
            elapsed = time.perf_counter() - started
        await sender.worker.stop()
        await close_keep_alive(client)
        await engine.dispose()
    delivered = len(fake.calls_to("chat.postMessage"))
    note(f"slack_sender: {delivered} delivered, {len(fake.rate_limited)} answered 429")
    await fake.stop()
    if delivered != len(messages):
        raise RuntimeError(f"delivered {delivered} of {len(messages)}")
    return elapsed


def run(names: set[str]) -> Iterable[Figure]:
    seconds = float(os.environ.get("BENCH_SLACK_SECONDS", "10"))
    worker_counts = [workers for workers, wanted in (
        (1, names & {"slack_ack_p99", "slack_ack_p50"}),
        (2, names & {"slack_ack_p99_workers2"}),
    ) if wanted]
    if worker_counts:
        timebot, bare = measure_ack(seconds, worker_counts)
        if "slack_ack_p99" in names:
            yield Figure("slack_ack_p99", percentile(timebot[1], 0.99), "ms",
                         percentile(bare, 0.99))
        if "slack_ack_p50" in names:
            yield Figure("slack_ack_p50", median(timebot[1]), "ms", median(bare))
        if "slack_ack_p99_workers2" in names:
            yield Figure("slack_ack_p99_workers2", percentile(timebot[2], 0.99), "ms",
                         percentile(bare, 0.99))
    if "slack_sender_10000" in names:
        rate = float(os.environ.get("BENCH_SLACK_RATE", "250"))
        count = int(os.environ.get("BENCH_SLACK_MESSAGES", "10000"))
        elapsed = asyncio.run(measure_sender(count, rate))
        total = count + (count + 1) // 2
        yield Figure("slack_sender_10000", elapsed, "s", total / rate)
