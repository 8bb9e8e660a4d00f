"""The load of bench.monday, each path as its people make it, from outside `timebot serve`:

- submissions: the employees' weekly timesheets through GraphQL (`submitTimesheet`, the
  administrator's key on their behalf), started at a steady pace over a window, open loop;
- the reminder run: `timebot reminders send --org ID --at TIME`, a process of its own;
- slash commands: signed `/timesheet status` of employees at /slack/events
  (tests/bot/slack/signing), open loop at a steady rate, sent from a process of its own (as
  bench.mail_load's SMTP clients are), each one's HTTP answer timed (the ack);
- approval replies: the approvers' answers to the review mails the relay received (bench.
  reply_mail: a comment, a signature, the review quoted; one in five a rejection), DKIM-signed,
  sent by bench.mail_load's clients at a steady rate.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from email.utils import parseaddr
from pathlib import Path

import aiosmtplib
import httpx

from bench.common import at_rate
from bench.mail_load import Mail, signed_reply
from bench.monday_sink import Arrival
from bench.monday_world import PEOPLE_DOMAIN, SIGNING_SECRET, Monday, slack_user
from bench.reply_mail import reply_message_id, styles
from bench.serve import timebot_command
from tests.bot.slack.fake_slack import FakeSlack
from tests.bot.slack.signing import SlackRequests

SUBMIT = ("mutation($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { submitTimesheet("
          "personId: $p, startTime: $s, endTime: $e) { id submitId status } }")
WEEK_MS = 7 * 86_400_000

Ack = tuple[float, float, int]  # (sent, s since the epoch; answered after, ms; HTTP status)


async def submissions(world: Monday, week: int, seconds: float
                      ) -> tuple[dict[str, float], list[str]]:
    """Every employee's timesheet of the week starting `week`, the submissions started evenly
    over `seconds`: ({submit id: when its request started (s since the epoch)}, what each
    refused submission was answered)."""
    started: dict[str, float] = {}
    refused: list[str] = []

    async def one(index: int) -> None:
        at = time.time()
        try:
            data = await world.gql(SUBMIT, {"p": world.ids[world.email(index)], "s": week,
                                            "e": week + WEEK_MS})
        except (RuntimeError, httpx.HTTPError, ValueError) as error:  # ValueError: not JSON
            refused.append(f"{type(error).__name__}: {str(error)[:200]}")
            return
        event = data["submitTimesheet"]
        if event["status"] != "s":
            raise RuntimeError(f"a submitted timesheet is {event['status']!r}, not waiting")
        started[str(event["submitId"] or event["id"])] = at

    employees = world.employees
    await at_rate(len(employees), len(employees) / seconds,
                  lambda number: one(employees[number]))
    return started, refused


async def reminder_run(world: Monday, at: str) -> tuple[float, float, float, int]:
    """`timebot reminders send --at`: (its start, s since the epoch; its wall time, s; the CPU
    seconds it used, user and system, its own children's included; how many it queued)."""
    started, clock = time.time(), time.perf_counter()
    command = timebot_command("reminders", "send", "--org", world.org_id, "--at", at)
    spy = os.environ.get("BENCH_MONDAY_PY_SPY")
    if spy:  # diagnosis: the run's collapsed stacks, a file a run
        command = [str(Path(sys.executable).with_name("py-spy")), "record", "-r", "200",
                   "-f", "raw", "-o", f"{spy}.{at[:10]}", "--", *command]
    code, said_out, said_err, cpu = await asyncio.to_thread(_run_measured, command, world.env)
    wall = time.perf_counter() - clock
    if code:
        raise RuntimeError(f"timebot reminders send: {said_err[-2000:]}")
    said = [line for line in said_out.splitlines()  # (py-spy writes its own lines too)
            if line.startswith("queued ")][-1]  # "queued N reminder(s) and digest(s)"
    return started, wall, cpu, int(said.split()[1])


def _run_measured(command: list[str], env: dict[str, str]) -> tuple[int, str, str, float]:
    """Runs `command` to its end: (exit code, stdout, stderr, CPU seconds it used). Reaped
    with wait4, which gives this one process's resource use (its own children's included):
    RUSAGE_CHILDREN would add any other child of the bench that ended meanwhile."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=err)
        _pid, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (process.returncode, out.read().decode(), err.read().decode(),
                usage.ru_utime + usage.ru_stime)


def replies(world: Monday, reviews: list[Arrival], first: int) -> list[tuple[Mail, str]]:
    """The approvers' replies to `reviews` (their mails as received), with the Message-ID of
    each (which its receipt's In-Reply-To names); every fifth a rejection."""
    made = []
    for offset, (review, style) in enumerate(zip(reviews, styles(len(reviews)), strict=True)):
        index = first + offset
        approver = parseaddr(str(review.headers["To"]))[1]
        token = parseaddr(str(review.headers["Reply-To"]))[1].split("@")[0].split("+", 1)[1]
        mail = signed_reply(world.key, approver, token, review.header("Message-ID"),
                            review=review.path.read_bytes(), style=style,
                            decision="reject" if index % 5 == 4 else "approve", index=index,
                            sender_name=approver.split("@")[0].upper(), domain=PEOPLE_DOMAIN)
        made.append((mail, reply_message_id(mail[1])))
    return made


RETRY_S = 5.0  # a sending MTA's retry after a 4xx, much shortened


def send_replies(port: int, mails: list[Mail], rate: float
                 ) -> dict[str, tuple[float, int]]:
    """In the load's process (LoadGenerator.call): one connection per reply, started every
    1/rate s, each tried again RETRY_S after a temporary refusal (4xx, as a sending MTA
    would) until accepted; {rcpt: (when its first attempt started, s since the epoch; the
    temporary refusals it met)}."""
    return asyncio.run(_send_replies(port, mails, rate))


async def _send_replies(port: int, mails: list[Mail], rate: float
                        ) -> dict[str, tuple[float, int]]:
    sent: dict[str, tuple[float, int]] = {}

    async def one(rcpt: str, raw: bytes) -> None:
        started, refusals = time.time(), 0
        while True:
            try:
                await aiosmtplib.send(raw, sender=f"bounces@{PEOPLE_DOMAIN}",
                                      recipients=[rcpt], hostname="127.0.0.1", port=port,
                                      start_tls=False, timeout=120)
                break
            except aiosmtplib.SMTPResponseException as error:
                if not 400 <= error.code < 500:
                    raise
                refusals += 1
                await asyncio.sleep(RETRY_S)
        sent[rcpt] = (started, refusals)

    await at_rate(len(mails), rate, lambda number: one(*mails[number]))
    return sent


class SlackLoad:
    """The slash commands' sender, a process of its own (spawned once, warmed before any
    timing)."""

    def __init__(self) -> None:
        self.pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))

    async def warm(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self.pool, _ready)

    async def commands(self, world: Monday, users: list[int], rate: float, seconds: float
                       ) -> list[Ack]:
        url = f"{world.base}/slack/events"
        acks: list[Ack] = await asyncio.get_running_loop().run_in_executor(
            self.pool, _commands_sync, url, world.fake.port,
            [slack_user(n) for n in users], rate, seconds)
        return acks

    def close(self) -> None:
        self.pool.shutdown()


def _ready() -> bool:
    return True


def _commands_sync(url: str, fake_port: int, users: list[str], rate: float, seconds: float
                   ) -> list[Ack]:
    return asyncio.run(_commands(url, FakeSlack(fake_port), users, rate, seconds))


async def _commands(url: str, fake: FakeSlack, users: list[str], rate: float, seconds: float
                    ) -> list[Ack]:
    """Open loop: `/timesheet status` of the next user every 1/rate s for `seconds`."""
    acks: list[Ack] = []
    async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=200)) as http:
        slack = SlackRequests(http, url, SIGNING_SECRET, fake)

        async def one(user: str) -> None:
            sent, clock = time.time(), time.perf_counter()
            try:
                status = (await slack.command("/timesheet", "status", user=user)).status_code
            except httpx.HTTPError:
                status = 0
            acks.append((sent, (time.perf_counter() - clock) * 1000, status))

        await at_rate(int(seconds * rate), rate, lambda number: one(users[number % len(users)]))
    return acks
