"""Monday 9:00 (issue #40): a company of 1,000 people on one `timebot serve`, measured from
outside only (HTTP, SMTP, the fake Slack, the CLI; bench.monday_world sets it up, bench.
monday_load makes the load, bench.monday_sink is the relay and the clock of every outbound
mail). Each path is measured alone first, then all of them at once (the mixed load): the
employees' 900 timesheets submitted within a minute (their review mails and Slack DMs fanning
out), a reminder run for everyone, and meanwhile slash commands and approval replies at 5 a
second each (bounded: they stop with the submissions' window).

Each figure is the mixed load's, beside the same path alone in the same run as its baseline:
- monday_receipt_p99, monday_receipt_p50: ms from the start of a reply's SMTP transaction to
  its receipt arriving at the relay (goal: p99 under 1 s);
- monday_first_review_mail: s from a submission to its review mail arriving, for the first
  review mail to arrive (goal: within 10 s);
- monday_slack_ack_p99, monday_slack_ack_max: ms from sending a signed slash command to its
  HTTP answer (goal: p99 under 3x alone, none over Slack's 3 s);
- monday_fanout_seconds: s from the first submission to the last of their review mails
  arriving (goal: within 1.5x alone);
- monday_reminder_run_seconds: s from starting `timebot reminders send` to the last of its
  reminders arriving (goal: within 1.5x alone);
- monday_reminder_run_cpu_seconds: the CPU seconds that command used (its own work: beside
  the figure above, what is left of its time was spent waiting for a core).
Notes (stderr, '#'): receipts and review mails lost or doubled (must be 0), acks over 3 s.

BENCH_MONDAY_DB=sqlite|postgresql (default sqlite; PostgreSQL on TIMEBOT_TEST_PG's server),
BENCH_MONDAY_WORKERS=1|2 (`timebot serve --workers`, default 1), BENCH_MONDAY_PEOPLE (default
1000: nine in ten are employees), BENCH_MONDAY_SUBMIT_SECONDS (the submissions' window, default
60), BENCH_MONDAY_RATE (slash commands and replies a second, default 5),
BENCH_MONDAY_ALONE_SECONDS (how long the replies and the commands run alone, default 10),
BENCH_MONDAY_WAIT (s to wait for what a phase set off before counting it lost, default 300).
BENCH_MONDAY_PY_SPY=PREFIX records each reminder run with py-spy (installed beside this
interpreter) into PREFIX.<date of --at> (collapsed stacks), for diagnosis.
BENCH_BUSY=N takes each phase on a busy machine (bench.busy); BENCH_LOG keeps timebot's log;
BENCH_DIAGNOSE installs bench.diagnose in `timebot serve` (started by SIGUSR1, written by
SIGUSR2: signal the serve process around the phase to look at).
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.busy import busy_machine
from bench.common import Figure, median, note
from bench.mail_load import LoadGenerator, Mail
from bench.mail_world import fresh_databases
from bench.monday_load import (
    Ack,
    SlackLoad,
    reminder_run,
    replies,
    send_replies,
    submissions,
)
from bench.monday_world import WEEKS, Monday
from bench.serve import cpu_used
from bench.slack_ack import percentile

FIGURES = ("monday_receipt_p99", "monday_receipt_p50", "monday_first_review_mail",
           "monday_slack_ack_p99", "monday_slack_ack_max", "monday_fanout_seconds",
           "monday_reminder_run_seconds", "monday_reminder_run_cpu_seconds")
REMINDERS_AT = {"alone": "2026-03-16T07:00:00+00:00", "mixed": "2026-03-23T07:00:00+00:00"}
SLACK_LIMIT_MS = 3000.0


def _setting(name: str, default: str) -> str:
    return os.environ.get(f"BENCH_MONDAY_{name}", default)


@dataclass
class Paths:
    """What one phase measured of each path it ran."""

    receipts_ms: list[float] = field(default_factory=list)
    receipts_lost: int = 0
    receipts_doubled: int = 0
    replies_deferred: int = 0  # answered 4xx at least once (sent again, as an MTA would)
    acks: list[Ack] = field(default_factory=list)
    fanout_s: float = 0.0
    first_review_s: float = 0.0
    review_p50_s: float = 0.0
    slack_posts: tuple[int, float] = (0, 0.0)  # (messages, s from the first submission to the last)
    reviews_lost: int = 0
    reviews_doubled: int = 0
    reminder_s: float = 0.0
    reminder_wall_s: float = 0.0
    reminder_cpu_s: float = 0.0
    reminders: tuple[int, int, int] = (0, 0, 0)  # (queued, arrived, people reminded twice)
    reminders_from: int = 0  # the relay's count of reminders before the run
    slack_origin: float = 0.0  # time.monotonic() at the first submission
    submissions_refused: list[str] = field(default_factory=list)  # what each was answered

    async def count_slack(self, world: Monday) -> None:
        posts = await world.slack_posts_since(self.slack_origin)
        self.slack_posts = (len(posts), max(posts, default=self.slack_origin)
                            - self.slack_origin)


async def _until(world: Monday, done: Callable[[], bool], what: str) -> None:
    """Reads the relay's record until `done()`, or for BENCH_MONDAY_WAIT s."""
    deadline = time.perf_counter() + float(_setting("WAIT", "300"))
    while True:
        world.arrivals.refresh()
        if done():
            return
        if time.perf_counter() > deadline:
            note(f"# monday: gave up waiting for {what}")
            return
        await asyncio.sleep(0.2)


async def _fanout(world: Monday, week: int, paths: Paths) -> list[str]:
    """The employees' timesheets of `week` submitted; their review mails awaited and timed.
    The submit ids."""
    paths.slack_origin = time.monotonic()
    started, paths.submissions_refused = await submissions(
        world, week, float(_setting("SUBMIT_SECONDS", "60")))
    reviews = world.arrivals.reviews
    await _until(world, lambda: all(event in reviews for event in started), "review mails")
    arrived = {event: reviews[event] for event in started if event in reviews}
    paths.reviews_lost = len(started) - len(arrived)
    paths.reviews_doubled = sum(len(mails) > 1 for mails in arrived.values())
    if arrived:
        first = min(arrived, key=lambda event: arrived[event][0].at)
        paths.first_review_s = arrived[first][0].at - started[first]
        paths.fanout_s = max(mails[0].at for mails in arrived.values()) - min(started.values())
        paths.review_p50_s = median([arrived[event][0].at - started[event]
                                     for event in arrived])
    return list(started)


async def _reminders(world: Monday, at: str, paths: Paths) -> None:
    before = paths.reminders_from = len(world.arrivals.reminders)
    started, paths.reminder_wall_s, paths.reminder_cpu_s, queued = await reminder_run(
        world, at)
    await _until(world, lambda: len(world.arrivals.reminders) - before >= queued, "reminders")
    mails = world.arrivals.reminders[before:]
    paths.reminders = (queued, len(mails), 0)
    paths.reminder_s = max((mail.at for mail in mails), default=started) - started


def _count_reminders(world: Monday, paths: Paths) -> None:
    """Once what the run set off has settled: the reminders that arrived, and how many people
    got more than one."""
    world.arrivals.refresh()
    mails = world.arrivals.reminders[paths.reminders_from:]
    people = Counter(mail.header("To").lower() for mail in mails)
    paths.reminders = (paths.reminders[0], len(mails),
                       sum(count > 1 for count in people.values()))
    for mail in [mail for mail in mails if people[mail.header("To").lower()] > 1][:6]:
        note(f"#   reminded more than once: {mail.header('To')} {mail.at:.2f} "
             f"{mail.headers.get('Subject')} {mail.header('Message-ID')}")


async def _replies(world: Monday, load: LoadGenerator, mails: list[tuple[Mail, str]],
                   rate: float, paths: Paths) -> None:
    if not mails:
        return
    message_ids = {mail[0]: message_id for mail, message_id in mails}
    sent: dict[str, tuple[float, int]] = await load.call(
        send_replies, world.smtp_port, [mail for mail, _ in mails], rate)
    paths.replies_deferred = sum(refusals > 0 for _start, refusals in sent.values())
    receipts = world.arrivals.receipts
    await _until(world, lambda: all(message_ids[rcpt] in receipts for rcpt in sent),
                 "receipts")
    for rcpt, (start, _refusals) in sent.items():
        found = receipts.get(message_ids[rcpt], [])
        paths.receipts_lost += not found
        paths.receipts_doubled += len(found) > 1
        if found:
            paths.receipts_ms.append((found[0].at - start) * 1000)
    paths.receipts_lost += len(mails) - len(sent)


async def _commands(world: Monday, slack: SlackLoad, rate: float, seconds: float,
                    paths: Paths) -> None:
    paths.acks = await slack.commands(world, world.employees, rate, seconds)


async def _phases(world: Monday, load: LoadGenerator, slack: SlackLoad
                  ) -> tuple[Paths, Paths]:
    rate = float(_setting("RATE", "5"))
    window = float(_setting("SUBMIT_SECONDS", "60"))
    alone_s = float(_setting("ALONE_SECONDS", "10"))
    alone, mixed = Paths(), Paths()
    assert world.serve is not None
    pid = world.serve.pid
    note("monday: the review fan-out alone")
    with busy_machine(), cpu_used(pid, "the fan-out alone"):
        submitted = await _fanout(world, WEEKS["alone"], alone)
    await world.settle("the fan-out alone")
    await alone.count_slack(world)
    note("monday: the reminder run alone")
    with busy_machine(), cpu_used(pid, "the reminder run alone"):
        await _reminders(world, REMINDERS_AT["alone"], alone)
    await world.settle("the reminder run alone")
    _count_reminders(world, alone)
    reviews = [world.arrivals.reviews[event][0] for event in submitted
               if event in world.arrivals.reviews]
    counts = (min(len(reviews), int(rate * alone_s)), int(rate * window))
    made = replies(world, reviews[: counts[0] + counts[1]], 0)
    note(f"monday: {counts[0]} replies alone")
    with busy_machine(), cpu_used(pid, "the replies alone"):
        await _replies(world, load, made[: counts[0]], rate, alone)
    await world.settle("the replies alone")
    note(f"monday: slash commands alone, {rate:g}/s for {alone_s:g} s")
    with busy_machine(), cpu_used(pid, "the slash commands alone"):
        await _commands(world, slack, rate, alone_s, alone)
    await world.settle("the slash commands alone")
    note(f"monday: the mixed load: {len(world.employees)} submissions in {window:g} s, the "
         f"reminder run, {len(made) - counts[0]} replies and {int(rate * window)} slash "
         f"commands at {rate:g}/s")
    with busy_machine(), cpu_used(pid, "the mixed load"):
        await asyncio.gather(
            _fanout(world, WEEKS["mixed"], mixed),
            _reminders(world, REMINDERS_AT["mixed"], mixed),
            _replies(world, load, made[counts[0]:], rate, mixed),
            _commands(world, slack, rate, window, mixed),
        )
    await world.settle("the mixed load")
    _count_reminders(world, mixed)
    await mixed.count_slack(world)
    return alone, mixed


def _ms(acks: list[Ack]) -> list[float]:
    return [ms for _sent, ms, _status in acks] or [0.0]


def _report(alone: Paths, mixed: Paths) -> list[Figure]:
    for name, paths in (("alone", alone), ("mixed", mixed)):
        refused = sum(status != 200 for _sent, _ms_, status in paths.acks)
        note(f"# {name}: receipts {len(paths.receipts_ms)}, lost {paths.receipts_lost}, "
             f"doubled {paths.receipts_doubled}; replies answered 4xx and sent again "
             f"{paths.replies_deferred}; review mails lost {paths.reviews_lost}, "
             f"doubled {paths.reviews_doubled}; slash commands {len(paths.acks)}, acks over "
             f"3 s {sum(ms > SLACK_LIMIT_MS for ms in _ms(paths.acks))}, not 200 {refused}; "
             f"reminders queued {paths.reminders[0]}, arrived {paths.reminders[1]}, people "
             f"reminded more than once {paths.reminders[2]} (the command took "
             f"{paths.reminder_wall_s:.1f} s, {paths.reminder_cpu_s:.1f} CPU-s); review mail "
             f"latency p50 "
             f"{paths.review_p50_s:.1f} s; Slack messages posted from the first submission "
             f"{paths.slack_posts[0]}, the last after {paths.slack_posts[1]:.1f} s; "
             f"submissions refused {len(paths.submissions_refused)}")
        for answer in sorted(set(paths.submissions_refused))[:3]:
            note(f"#   a submission refused: {answer}")
    receipts = (mixed.receipts_ms or [0.0], alone.receipts_ms or [0.0])
    acks = (_ms(mixed.acks), _ms(alone.acks))
    return [
        Figure("monday_receipt_p99", percentile(receipts[0], 0.99), "ms",
               percentile(receipts[1], 0.99)),
        Figure("monday_receipt_p50", median(receipts[0]), "ms", median(receipts[1])),
        Figure("monday_first_review_mail", mixed.first_review_s, "s", alone.first_review_s),
        Figure("monday_slack_ack_p99", percentile(acks[0], 0.99), "ms",
               percentile(acks[1], 0.99)),
        Figure("monday_slack_ack_max", max(acks[0]), "ms", max(acks[1])),
        Figure("monday_fanout_seconds", mixed.fanout_s, "s", alone.fanout_s),
        Figure("monday_reminder_run_seconds", mixed.reminder_s, "s", alone.reminder_s),
        Figure("monday_reminder_run_cpu_seconds", mixed.reminder_cpu_s, "s",
               alone.reminder_cpu_s),
    ]


async def measure() -> tuple[list[Figure], Paths, Paths]:
    """Every figure, and what the phases alone and mixed measured."""
    database = _setting("DB", "sqlite")
    if database not in ("sqlite", "postgresql"):
        raise ValueError(f"BENCH_MONDAY_DB must be sqlite or postgresql, not {database!r}")
    workers = int(_setting("WORKERS", "1"))
    people = int(_setting("PEOPLE", "1000"))
    note(f"# monday: {people} people, {database}, timebot serve with {workers} worker(s)")
    load, slack = LoadGenerator(), SlackLoad()
    await asyncio.gather(load.warm(), slack.warm())
    started = time.perf_counter()
    try:
        async with fresh_databases(database == "postgresql") as databases:
            with tempfile.TemporaryDirectory(prefix="bench-monday-") as tmp:
                world = Monday(Path(tmp), databases, workers, people)
                try:
                    await world.start()
                    note(f"monday: set up in {time.perf_counter() - started:.0f} s")
                    alone, mixed = await _phases(world, load, slack)
                finally:
                    await world.stop()
    finally:
        load.close()
        slack.close()
    note(f"monday: {time.perf_counter() - started:.0f} s in all")
    return _report(alone, mixed), alone, mixed


def run(names: set[str]) -> list[Figure]:
    import uvloop

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        figures, _alone, _mixed = runner.run(measure())
    return [figure for figure in figures if figure.name in names]
