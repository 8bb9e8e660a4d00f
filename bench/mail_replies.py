"""Approval replies by mail, end to end, on a live `timebot serve` (bench.mail_world: its own
process, production configuration, SQLite unless BENCH_MAIL_DATABASE=postgresql):

- mail_replies_throughput: replies per second from the first SMTP transaction to the last
  receipt delivered to the outbox — each reply DKIM-signed (verified against a key published
  through TIMEBOT_DKIM_TXT_FILE), its approval applied with the approver's own key through
  GraphQL, its receipt queued and written to the Maildir. Baseline: the same-work program
  (bench.same_work_baseline, its own process) fed the same messages by the same clients in the
  same run. Goal: ratio ≥ 0.5 with one worker.
- mail_replies_throughput_vs_bare_sink: the same figure beside a bare aiosmtpd sink (250 to
  every message, nothing else): how far from the bare SMTP exchange.
- mail_replies_receipt_p99: p99 ms from the start of a reply's SMTP transaction to its receipt
  being delivered, with replies arriving at a steady 50 per second. Baseline: the sink's p99
  SMTP transaction time at the same rate.

The SMTP clients run in a process of their own (bench.mail_load). Details go to stderr: CPU ms
per reply of the timebot process, HTTP requests per reply by route, log lines per reply.

BENCH_MAIL_REPLIES (default 300) sets how many replies the throughput run sends (the latency
run sends 10 s worth at 50/s). BENCH_MAIL_DATABASE=postgresql runs both databases on the
PostgreSQL server of TIMEBOT_TEST_PG (default postgresql://postgres@127.0.0.1:5432/postgres)
instead of SQLite. BENCH_MAIL_RATE (default 50) changes the latency run's rate, for diagnosis.
BENCH_WORKERS is passed to `timebot serve --workers`. BENCH_PY_SPY names a file for py-spy's
collapsed stacks of timebot during the throughput run (py-spy installed), for diagnosis.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from aiosmtpd.smtp import SMTP as SMTPProtocol
from aiosmtpd.smtp import Envelope, Session

from bench.common import Figure, note
from bench.mail_load import Key, LoadGenerator, Mail, free_port, new_key, p99
from bench.mail_world import TimebotProcess, spawn
from bench.same_work_baseline import inbox_done

FIGURES = ("mail_replies_throughput", "mail_replies_throughput_vs_bare_sink",
           "mail_replies_receipt_p99")
RATE = int(os.environ.get("BENCH_MAIL_RATE", "50"))  # replies per second, latency run
RATE_SECONDS = 10
PG_ADMIN_DSN = os.environ.get("TIMEBOT_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")


class _Sink:
    async def handle_DATA(self, server: Any, session: Session, envelope: Envelope) -> str:
        return "250 2.0.0 OK"


async def _sink(load: LoadGenerator, mails: list[Mail], *, rate: int | None
                ) -> tuple[float, float]:
    """(messages/s over the clients' connections, p99 transaction ms at `rate`) of a bare
    sink."""
    port = free_port()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: SMTPProtocol(_Sink()), "127.0.0.1", port)
    try:
        started = time.perf_counter()
        await load.send_all(port, mails)
        per_second = len(mails) / (time.perf_counter() - started)
        p99_ms = 0.0
        if rate is not None:
            timed = await load.send_at_rate(port, mails[: rate * RATE_SECONDS], rate)
            p99_ms = p99([spent for _, spent in timed.values()]) * 1000
        return per_second, p99_ms
    finally:
        server.close()
        await server.wait_closed()


async def _same_work(load: LoadGenerator, root: Path, world: TimebotProcess, key: Key,
                     events: list[str], mails: list[Mail]) -> float:
    """Replies per second of the same-work program, in its own process."""
    directory = root / "same-work"
    directory.mkdir()
    (directory / "events.txt").write_text("\n".join(events) + "\n")
    txt = directory / "dkim.txt"
    txt.write_text(key.txt_line + "\n")
    smtp_port, http_port = free_port(), free_port()
    process = spawn(
        [sys.executable, "-m", "bench.same_work_baseline", str(smtp_port), str(http_port),
         str(directory), world.secret, str(txt)],
        None, directory / "log",
    )
    try:
        import aiosmtplib

        for _ in range(300):
            try:
                smtp = aiosmtplib.SMTP(hostname="127.0.0.1", port=smtp_port, start_tls=False)
                async with smtp:
                    break
            except (OSError, aiosmtplib.SMTPException):
                await asyncio.sleep(0.1)
        started = time.perf_counter()
        await load.send_all(smtp_port, mails)
        deadline = time.perf_counter() + 600
        while inbox_done(directory) < len(mails):
            if process.poll() is not None or time.perf_counter() > deadline:
                raise RuntimeError("same-work baseline failed: "
                                   + (directory / "log").read_text()[-2000:])
            await asyncio.sleep(0.05)
        return len(mails) / (time.perf_counter() - started)
    finally:
        process.terminate()
        process.wait(timeout=30)


async def _pg(statement: str) -> None:
    import asyncpg

    connection = await asyncpg.connect(PG_ADMIN_DSN)
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


async def _run(names: set[str]) -> list[Figure]:
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


async def _throughput(names: set[str], count: int, root: Path, key: Key,
                      world: TimebotProcess, load: LoadGenerator) -> list[Figure]:
    note(f"setting up {count} submitted timesheets")
    events = await world.timesheets(count)
    mails = world.replies(events)
    await world.wait_settled()
    sink_rate, _ = await _sink(load, mails, rate=None)
    same_work = await _same_work(load, root, world, key, events, mails)
    cpu, lines, requests = world.cpu(), world.log_lines(), await world.requests()
    spy = world.sample_with_py_spy()
    started = time.perf_counter()
    transactions = sorted(await load.send_all(world.smtp_port, mails))
    accepted = time.perf_counter() - started
    await world.wait_receipts(count)
    rate = count / (time.perf_counter() - started)
    if spy is not None:
        spy.send_signal(signal.SIGINT)
        spy.wait(timeout=60)
    await world.wait_settled()  # what the replies set off (events, owner notices) is done
    cpu_ms = (world.cpu() - cpu) * 1000 / count
    after = await world.requests()
    per_route = {route: (after[route] - requests.get(route, 0)) / count for route in after
                 if route != "metrics" and after[route] > requests.get(route, 0)}
    note(f"{count} replies end to end in {count / rate:.2f} s: {rate:.0f}/s; same-work "
         f"{same_work:.0f}/s; sink {sink_rate:.0f}/s; timebot CPU {cpu_ms:.1f} ms a reply; "
         f"HTTP requests a reply {per_route}; log lines a reply "
         f"{(world.log_lines() - lines) / count:.2f}; all accepted after {accepted:.2f} s, "
         f"SMTP transaction p50 {transactions[len(transactions) // 2] * 1000:.0f} ms")
    figures = []
    if "mail_replies_throughput" in names:
        figures.append(Figure("mail_replies_throughput", rate, "replies/s", same_work))
    if "mail_replies_throughput_vs_bare_sink" in names:
        figures.append(Figure("mail_replies_throughput_vs_bare_sink", rate, "replies/s",
                              sink_rate))
    return figures


async def _latency(world: TimebotProcess, load: LoadGenerator) -> Figure:
    steady = RATE * RATE_SECONDS
    note(f"setting up {steady} submitted timesheets")
    mails = world.replies(await world.timesheets(steady))
    await world.wait_settled()
    _, sink_p99 = await _sink(load, mails, rate=RATE)
    before = await world.receipts_delivered()
    sent = await load.send_at_rate(world.smtp_port, mails, RATE)
    await world.wait_receipts(before + steady)
    delivered = await world.receipt_times()
    latencies = [(delivered[rcpt] - start) * 1000 for rcpt, (start, _) in sent.items()]
    p99_ms = p99(latencies)
    p50 = sorted(latencies)[len(latencies) // 2]
    note(f"receipt latency at {RATE}/s: p50 {p50:.0f} ms, p99 {p99_ms:.0f} ms "
         f"(goal: under 1000 ms); sink p99 {sink_p99:.1f} ms")
    return Figure("mail_replies_receipt_p99", p99_ms, "ms", sink_p99)


async def _measure(names: set[str], count: int, databases: dict[str, str]) -> list[Figure]:
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="bench-mail-") as tmp:
        key = new_key()
        world = TimebotProcess(Path(tmp), key, databases)
        load = LoadGenerator()
        await load.warm()
        try:
            await world.start()
            if names & {"mail_replies_throughput", "mail_replies_throughput_vs_bare_sink"}:
                figures += await _throughput(names, count, Path(tmp), key, world, load)
            if "mail_replies_receipt_p99" in names:
                figures.append(await _latency(world, load))
        finally:
            await world.stop()
            load.close()
    return figures


def run(names: set[str]) -> list[Figure]:
    import uvloop

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(_run(names))
