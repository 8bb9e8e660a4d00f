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
- mail_replies_throughput_vs_full_work: the same figure beside bench.full_work_baseline, the
  program that does all of an approval's required work (the key authenticated, the stage and
  its approvers resolved, the approval event, state, audit row, Journal entry, signed event row
  and the reply's words written, the receipt and the owner's notice sent) in plain sqlite3.
  Goal: ratio ≥ 0.5 with one worker (issue #26).
- mail_replies_receipt_p99: p99 ms from the start of a reply's SMTP transaction to its receipt
  being delivered, with replies arriving at a steady 50 per second. Baseline: the sink's p99
  SMTP transaction time at the same rate. Goal: under 1000 ms.

These three are taken on one `timebot serve` (with BENCH_WORKERS workers, default 1). The
scale-out figures (issue #18) each start timebot afresh, on fresh databases:
- mail_replies_workers2_scaling: replies per second, measured as mail_replies_throughput, of
  `timebot serve --workers 2`. Baseline: the same with one worker (`timebot serve`), measured
  just before in the same run on its own fresh databases. The ratio is the scaling; goal ≥ 1.6
  on SQLite and on PostgreSQL.
- mail_replies_receipt_p99_workers2: mail_replies_receipt_p99 of `timebot serve --workers 2`
  (after the throughput run above when both are asked for, as the one-worker figures are).
  Baseline: the sink's p99 SMTP transaction time at the same rate. Goal: under 1000 ms, on a
  quiet machine and on a busy one (BENCH_BUSY, bench.busy).

The SMTP clients run in a process of their own (bench.mail_load). Details go to stderr: CPU ms
per reply of the timebot processes, HTTP requests per reply by route, log lines per reply.

BENCH_MAIL_REPLIES (default 300) sets how many replies a throughput run sends (a latency run
sends 10 s worth at 50/s). BENCH_MAIL_DATABASE=postgresql runs both databases on the
PostgreSQL server of TIMEBOT_TEST_PG (default postgresql://postgres@127.0.0.1:5432/postgres)
instead of SQLite. BENCH_MAIL_RATE (default 50) changes the latency runs' rate, for diagnosis.
BENCH_WORKERS is passed to `timebot serve --workers` for the first three figures. BENCH_PY_SPY
names a file for py-spy's collapsed stacks of timebot during their throughput run (py-spy
installed), for diagnosis. BENCH_BUSY=N takes every run on a busy machine (bench.busy).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from typing import Any

from aiosmtpd.smtp import SMTP as SMTPProtocol
from aiosmtpd.smtp import Envelope, Session

from bench.busy import busy_machine
from bench.common import Figure, note
from bench.mail_load import Key, LoadGenerator, Mail, free_port, new_key, p99
from bench.mail_world import TimebotProcess, running_timebot, spawn
from bench.same_work_baseline import inbox_done
from bench.serve import cpu_seconds

THROUGHPUT = ("mail_replies_throughput", "mail_replies_throughput_vs_bare_sink",
              "mail_replies_throughput_vs_full_work")
RECEIPT_P99 = "mail_replies_receipt_p99"
SCALING = "mail_replies_workers2_scaling"
RECEIPT_P99_WORKERS2 = "mail_replies_receipt_p99_workers2"
FIGURES = (*THROUGHPUT, RECEIPT_P99, SCALING, RECEIPT_P99_WORKERS2)
RATE = int(os.environ.get("BENCH_MAIL_RATE", "50"))  # replies per second, latency run
RATE_SECONDS = 10


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
        with busy_machine():
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


async def _same_work(load: LoadGenerator, world: TimebotProcess, key: Key,
                     events: list[str], mails: list[Mail],
                     program: str = "same_work_baseline") -> tuple[float, float]:
    """Replies per second of a baseline program (bench.<program>), in its own process, and
    its CPU ms a reply (a second measure, less moved by the host than the wall clock)."""
    directory = world.root / program
    directory.mkdir()
    (directory / "events.txt").write_text("\n".join(events) + "\n")
    txt = directory / "dkim.txt"
    txt.write_text(key.txt_line + "\n")
    smtp_port, http_port = free_port(), free_port()
    process = spawn(
        [sys.executable, "-m", f"bench.{program}", str(smtp_port), str(http_port),
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
        with busy_machine():
            cpu = cpu_seconds(process.pid)
            started = time.perf_counter()
            await load.send_all(smtp_port, mails)
            deadline = time.perf_counter() + 600
            while inbox_done(directory) < len(mails):
                if process.poll() is not None or time.perf_counter() > deadline:
                    raise RuntimeError(f"{program} failed: "
                                       + (directory / "log").read_text()[-2000:])
                await asyncio.sleep(0.05)
            rate = len(mails) / (time.perf_counter() - started)
            return rate, (cpu_seconds(process.pid) - cpu) * 1000 / len(mails)
    finally:
        process.terminate()
        process.wait(timeout=30)


async def _send_replies(world: TimebotProcess, load: LoadGenerator, mails: list[Mail]
                        ) -> tuple[float, float, list[float]]:
    """The replies sent as fast as the clients go: (replies/s from the first SMTP transaction
    to the last receipt delivered, s until the last was accepted, each SMTP transaction's s,
    sorted)."""
    before = await world.receipts_delivered()
    with busy_machine():
        started = time.perf_counter()
        transactions = sorted(await load.send_all(world.smtp_port, mails))
        accepted = time.perf_counter() - started
        await world.wait_receipts(before + len(mails))
        return len(mails) / (time.perf_counter() - started), accepted, transactions


async def _prepared_replies(world: TimebotProcess, count: int) -> tuple[list[str], list[Mail]]:
    """`count` submitted timesheets (what they set off done) and a reply approving each."""
    note(f"setting up {count} submitted timesheets")
    events = await world.timesheets(count)
    await world.wait_settled()
    mails = await world.replies(events)
    return events, mails


async def _throughput(names: set[str], count: int, key: Key, world: TimebotProcess,
                      load: LoadGenerator) -> list[Figure]:
    events, mails = await _prepared_replies(world, count)
    sink_rate, _ = await _sink(load, mails, rate=None)
    same_work, _ = await _same_work(load, world, key, events, mails)
    full_work = full_work_cpu_ms = 0.0
    if "mail_replies_throughput_vs_full_work" in names:
        full_work, full_work_cpu_ms = await _same_work(load, world, key, events, mails,
                                                       "full_work_baseline")
    cpu, lines, requests = world.cpu(), world.log_lines(), await world.requests()
    spy = world.sample_with_py_spy()
    world.profile(True)
    rate, accepted, transactions = await _send_replies(world, load, mails)
    if spy is not None:
        spy.send_signal(signal.SIGINT)
        spy.wait(timeout=60)
    await world.wait_settled()  # what the replies set off (events, owner notices) is done
    world.profile(False)
    cpu_ms = (world.cpu() - cpu) * 1000 / count
    after = await world.requests()
    per_route = {route: (after[route] - requests.get(route, 0)) / count for route in after
                 if route != "metrics" and after[route] > requests.get(route, 0)}
    note(f"{count} replies end to end in {count / rate:.2f} s: {rate:.0f}/s; same-work "
         f"{same_work:.0f}/s; full-work {full_work:.0f}/s; sink {sink_rate:.0f}/s; "
         f"timebot CPU {cpu_ms:.1f} ms a reply; full-work CPU {full_work_cpu_ms:.1f} ms a "
         f"reply (CPU ratio {full_work_cpu_ms / cpu_ms:.3f}); "
         f"HTTP requests a reply {per_route}; log lines a reply "
         f"{(world.log_lines() - lines) / count:.2f}; all accepted after {accepted:.2f} s, "
         f"SMTP transaction p50 {transactions[len(transactions) // 2] * 1000:.0f} ms")
    figures = []
    if "mail_replies_throughput" in names:
        figures.append(Figure("mail_replies_throughput", rate, "replies/s", same_work))
    if "mail_replies_throughput_vs_bare_sink" in names:
        figures.append(Figure("mail_replies_throughput_vs_bare_sink", rate, "replies/s",
                              sink_rate))
    if "mail_replies_throughput_vs_full_work" in names:
        figures.append(Figure("mail_replies_throughput_vs_full_work", rate, "replies/s",
                              full_work))
    return figures


async def _latency(name: str, world: TimebotProcess, load: LoadGenerator) -> Figure:
    steady = RATE * RATE_SECONDS
    _, mails = await _prepared_replies(world, steady)
    _, sink_p99 = await _sink(load, mails, rate=RATE)
    before = await world.receipts_delivered()
    with busy_machine():
        sent = await load.send_at_rate(world.smtp_port, mails, RATE)
        await world.wait_receipts(before + steady)
    await world.wait_settled()  # nothing in hand when timebot is stopped
    delivered = await world.receipt_times()
    latencies = [(delivered[rcpt] - start) * 1000 for rcpt, (start, _) in sent.items()]
    p99_ms = p99(latencies)
    p50 = sorted(latencies)[len(latencies) // 2]
    note(f"receipt latency at {RATE}/s, {world.workers} worker(s): p50 {p50:.0f} ms, "
         f"p99 {p99_ms:.0f} ms (goal: under 1000 ms); sink p99 {sink_p99:.1f} ms")
    return Figure(name, p99_ms, "ms", sink_p99)


async def _scale_out(names: set[str], count: int, key: Key, load: LoadGenerator
                     ) -> list[Figure]:
    """The two-worker figures, each timebot started afresh on fresh databases."""
    figures: list[Figure] = []
    one_worker = one_cpu_ms = 0.0
    if SCALING in names:
        async with running_timebot(key, 1) as world:
            _, mails = await _prepared_replies(world, count)
            cpu = world.cpu()
            one_worker, _, _ = await _send_replies(world, load, mails)
            await world.wait_settled()
            one_cpu_ms = (world.cpu() - cpu) * 1000 / count
    async with running_timebot(key, 2) as world:
        if SCALING in names:
            _, mails = await _prepared_replies(world, count)
            cpu = world.cpu()
            two_workers, _, _ = await _send_replies(world, load, mails)
            await world.wait_settled()
            two_cpu_ms = (world.cpu() - cpu) * 1000 / count
            note(f"{count} replies end to end: {two_workers:.0f}/s with 2 workers, "
                 f"{one_worker:.0f}/s with one: x{two_workers / one_worker:.2f} (goal: x1.6); "
                 f"timebot CPU a reply {two_cpu_ms:.1f} ms with 2 workers, {one_cpu_ms:.1f} "
                 f"with one: x{two_cpu_ms / one_cpu_ms:.2f}")
            figures.append(Figure(SCALING, two_workers, "replies/s", one_worker))
        if RECEIPT_P99_WORKERS2 in names:
            figures.append(await _latency(RECEIPT_P99_WORKERS2, world, load))
    return figures


async def _measure(names: set[str]) -> list[Figure]:
    count = int(os.environ.get("BENCH_MAIL_REPLIES", "300"))
    figures: list[Figure] = []
    key = new_key()
    load = LoadGenerator()
    await load.warm()
    try:
        if names & {*THROUGHPUT, RECEIPT_P99}:
            workers = int(os.environ.get("BENCH_WORKERS", "1"))
            async with running_timebot(key, workers) as world:
                if names & set(THROUGHPUT):
                    figures += await _throughput(names, count, key, world, load)
                if RECEIPT_P99 in names:
                    figures.append(await _latency(RECEIPT_P99, world, load))
        if names & {SCALING, RECEIPT_P99_WORKERS2}:
            figures += await _scale_out(names, count, key, load)
    finally:
        load.close()
    return figures


def run(names: set[str]) -> list[Figure]:
    import uvloop

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(_measure(names))
