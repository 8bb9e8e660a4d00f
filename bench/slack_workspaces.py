"""Many Slack workspaces on one process (#27).

- slack_workspaces_ack_p99: p99 ms from a signed `/timesheet remind` to timebot's ack with 100
  (BENCH_WORKSPACES) workspaces installed through OAuth, each serving its own organisation,
  the commands spread over all of them, at 100 (BENCH_SLACK_ACK_RATE) requests per second
  open-loop (BENCH_SLACK_SECONDS, default 10 s); baseline: the same with one workspace
  installed the same way, in the same run. Goal: ratio <= 1.2.
- slack_workspaces_review_dms: seconds from a submission in each of the 100 organisations (all
  sent at once) to the last of the 100 review DMs reaching its approver in that
  organisation's own workspace, each sent with that workspace's own token; baseline: the same
  with one workspace. Goal: all within one nudge interval (60 s), every one with its own token.
- slack_workspaces_nudges: seconds from the server's start to the last of the 100 staff
  nudges (one due in each organisation since before the start), each to that workspace's
  own member with its own token; baseline: one workspace. Goal: every one within two nudge
  intervals (120 s) of the start and 10 s for the tick's work (bench/slack_nudges.py says
  why that is "on time"). The commands and the review DMs come before the first ticks.

Each `timebot serve` (embedded service on SQLite) starts afresh in its own data directory,
after its organisations and installations were written there (the installations through the
installation store the OAuth redirect uses); the fake Slack runs in its own process and knows
each workspace's token, admin and users.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import httpx

from bench import slack_nudges
from bench.busy import busy_machine
from bench.common import Figure, note
from bench.serve import cpu_seconds, serve_command
from bench.slack_ack import RATE as DEFAULT_RATE
from bench.slack_ack import percentile, spawn, stop, wait_up
from tests.bot.slack.fake_slack import FakeSlack
from tests.bot.slack.signing import SlackRequests, command_fields
from tests.net import free_port

FIGURES = ("slack_workspaces_ack_p99", "slack_workspaces_review_dms", "slack_workspaces_nudges")
SECRET = "bench-signing-secret"
GOAL_RATIO = 1.2
# Commands per second (BENCH_SLACK_ACK_RATE; slack_ack's 100 by default): lower it on a
# machine that cannot serve 100 a second with one workspace, or the figures measure a queue.
RATE = float(os.environ.get("BENCH_SLACK_ACK_RATE", str(DEFAULT_RATE)))


def team(index: int) -> str:
    return f"T{index:08d}"


def token(index: int) -> str:
    return f"xoxb-bench-{team(index)}"


def admin_email(index: int) -> str:
    return f"ada{index}@ws{index}.bench.example"


def admin_user(index: int) -> str:
    return f"UADA{index:06d}"


async def serve_fake(port: int, count: int) -> None:
    """`python -m bench.slack_workspaces PORT COUNT`: the fake Slack with COUNT workspaces."""
    fake = await FakeSlack.start(port)
    for index in range(count):
        fake.add_team(team(index), f"Workspace {index}")
        fake.tokens[token(index)] = team(index)
        fake.add_user(admin_user(index), admin_email(index), name=f"Ada {index}",
                      team=team(index))
        fake.add_user(slack_nudges.staff_user(index), slack_nudges.staff_email(index),
                      name=f"Nora {index}", team=team(index))
    assert fake.task is not None
    await fake.task


async def seed(env: dict[str, str], count: int) -> list[tuple[str, str]]:
    """COUNT organisations in the embedded service, each with its workspace installed;
    (organisation id, admin key) each."""
    from slack_sdk.oauth.installation_store import Installation

    from bot.slack.oauth import BOT_SCOPES
    from bot.slack.oauth_store import InstallationStore, Issued
    from plumbing.clock import SYSTEM_CLOCK
    from plumbing.db import unit_of_work
    from service.organisation.provisioning import create_organisation
    from shell.embedded_db import embedded_sessions
    from timebot.config import load_settings
    from timebot.crypto import SecretBox
    from timebot.logs import configure_logging
    from timebot.state.db import create_engine, migrate, session_factory

    configure_logging("WARNING")  # stdout is for the figure lines, not each installation's
    settings = load_settings(env)
    created: list[tuple[str, str, str]] = []
    async with embedded_sessions(settings) as sessions:
        for index in range(count):
            async with unit_of_work(sessions) as session:
                made = await create_organisation(session, f"Organisation {index}",
                                                 f"Ada {index}", admin_email(index),
                                                 SYSTEM_CLOCK.now_ms())
            created.append((made.organisation.id, made.admin.id, made.apikey))
    engine = create_engine(settings.database_url)
    try:
        await migrate(engine)
        store = InstallationStore(session_factory(engine), SYSTEM_CLOCK,
                                  SecretBox(settings.secret_key))
        for index, (org_id, admin_id, _key) in enumerate(created):
            await store.save_for(Installation(
                app_id="A0TIMEBOT", enterprise_id=None, team_id=team(index),
                team_name=f"Workspace {index}", bot_token=token(index),
                bot_id=f"B{team(index)}", bot_user_id=f"UBOT{team(index)}",
                bot_scopes=list(BOT_SCOPES), user_id=admin_user(index),
            ), Issued(org_id, admin_id))
    finally:
        await engine.dispose()
    return [(org_id, key) for org_id, _admin, key in created]


async def gql(http: httpx.AsyncClient, url: str, key: str, query: str, **variables: Any
              ) -> Any:
    answer = (await http.post(url, json={"query": query, "variables": variables},
                              headers={"apikey": key})).json()
    if answer.get("errors") or answer.get("permissionsErrors"):
        raise RuntimeError(f"{query[:60]}: {answer}")
    return answer["data"]


async def prepare_reviews(graphql: str, orgs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """In each organisation: Erin, whose timesheet the admin approves, with two hours this
    week; (admin key, Erin's id) each."""
    ready = []
    async with httpx.AsyncClient(timeout=60) as http:
        for index, (_org, key) in enumerate(orgs):
            roles = (await gql(http, graphql, key, "{ getRoles { id name } }"))["getRoles"]
            role = next(r["id"] for r in roles if r["name"].lower() == "employee")
            me = (await gql(http, graphql, key, "{ currentPerson { id } }"))["currentPerson"]
            erin = (await gql(
                http, graphql, key, "mutation($n: SvcName!, $e: SvcEmail!, $r: SvcId!) { "
                "addPerson(name: $n, email: $e, roleId: $r) { id } }",
                n=f"Erin {index}", e=f"erin{index}@ws{index}.bench.example",
                r=role))["addPerson"]["id"]
            await gql(http, graphql, key, "mutation($id: SvcId!, $s: [SvcApprovalStageInput])"
                      " { editPersonApprovalStages(id: $id, stages: $s) { id } }",
                      id=erin, s=[{"type": "person", "personIds": [me["id"]],
                                   "quorum": "any"}])
            await gql(http, graphql, key, "mutation($s: SvcTimestamp!, $p: SvcId!) { "
                      "addTimeRecord(startTime: $s, duration: 7200000, personId: $p) { id } }",
                      s=week_start_ms() + 9 * 3_600_000, p=erin)
            ready.append((key, erin))
    return ready


def week_start_ms() -> int:
    day = 86_400_000
    now = int(time.time() * 1000)
    monday = now - (now // day + 3) % 7 * day  # 1970-01-01 was a Thursday
    return monday // day * day


async def submit_all(graphql: str, ready: list[tuple[str, str]]) -> None:
    start = week_start_ms()
    async with httpx.AsyncClient(timeout=60) as http:
        await asyncio.gather(*(gql(
            http, graphql, key, "mutation($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) {"
            " submitTimesheet(personId: $p, startTime: $s, endTime: $e) { id } }",
            p=erin, s=start, e=start + 7 * 86_400_000) for key, erin in ready))


async def load(url: str, fake: FakeSlack, count: int, seconds: float) -> list[float]:
    """Open loop: one signed command every 1/RATE s, each from the next workspace's admin."""
    latencies: list[float] = []
    failures: list[str] = []
    limits = httpx.Limits(max_connections=500, max_keepalive_connections=500)
    async with httpx.AsyncClient(timeout=10, limits=limits) as http:
        slack = SlackRequests(http, url, SECRET, fake)

        async def one(sent: int) -> None:
            index = sent % count
            fields = {**command_fields(fake, "/timesheet", "remind", user=admin_user(index)),
                      "team_id": team(index)}
            started = time.perf_counter()
            try:
                response = await slack.form(fields)
            except httpx.TransportError as error:  # counted as an ack that took this long
                failures.append(repr(error))
            else:
                if response.status_code != 200 or "not connected" in response.text:
                    raise RuntimeError(f"HTTP {response.status_code}: {response.text}")
            latencies.append((time.perf_counter() - started) * 1000)

        for sent in range(max(20, count)):  # warm-up: connections, each workspace once
            await one(sent)
        latencies.clear()
        tasks = []
        origin = time.perf_counter()
        for sent in range(int(seconds * RATE)):
            delay = origin + sent / RATE - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(sent)))
        await asyncio.gather(*tasks)
    if failures:
        note(f"slack_workspaces: {len(failures)} of {len(latencies)} commands got no answer "
             f"(first: {failures[0]})")
    return latencies


def idle(pid: int, what: str, seconds: float = 300.0) -> None:
    """Wait until the process (and its children) used under a tenth of a core for 2 s."""
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        before = cpu_seconds(pid)
        time.sleep(2.0)
        if cpu_seconds(pid) - before < 0.2:
            note(f"slack_workspaces: idle after {what} in {time.perf_counter() - started:.0f} s")
            return
    note(f"slack_workspaces: still busy with {what} after {seconds:.0f} s")


def review_dms(http: httpx.Client, fake: FakeSlack, count: int) -> int:
    """The DMs to the admins (the approvers), not the staff nudges to the Noras."""
    admins = {admin_user(index) for index in range(count)}
    admins |= {"D" + user[1:] for user in admins}
    return sum(1 for call in http.get(f"{fake.base_url}/calls/chat.postMessage").json()
               if call["channel"] in admins)


def measure(count: int, seconds: float) -> tuple[list[float], float, float]:
    """With `count` workspaces: the acks (ms each), the seconds to the last review DM and the
    seconds from the start to the last staff nudge."""
    port = free_port()
    fake = FakeSlack(free_port())
    processes = [spawn([sys.executable, "-m", "bench.slack_workspaces", str(fake.port),
                        str(count)])]
    try:
        wait_up(f"{fake.base_url}/response/up", processes[0])
        with tempfile.TemporaryDirectory() as tmp:
            env = {**{k: v for k, v in os.environ.items()
                      if not k.startswith(("TIMEBOT_", "SLACK_"))},
                   "TIMEBOT_DATA_DIR": tmp, "TIMEBOT_HTTP_PORT": str(port),
                   "TIMEBOT_SMTP_PORT": "0", "SLACK_CLIENT_ID": "1.2",
                   "SLACK_CLIENT_SECRET": "bench-client-secret",
                   "SLACK_SIGNING_SECRET": SECRET, "TIMEBOT_SLACK_API_URL": fake.api_url,
                   "TIMEBOT_SECRET_KEY": secrets.token_urlsafe(48)}
            started = time.perf_counter()
            orgs = asyncio.run(seed(env, count))
            asyncio.run(slack_nudges.prepare_nudges(env, orgs))
            note(f"slack_workspaces: {count} organisations and installations written in "
                 f"{time.perf_counter() - started:.1f} s")
            processes.append(spawn(serve_command(1), env, Path(tmp) / "timebot.log"))
            url = f"http://127.0.0.1:{port}/slack/events"
            wait_up(url, processes[-1])
            up = time.monotonic()  # the fake's clock too: the same machine's CLOCK_MONOTONIC
            idle(processes[-1].pid, "start-up")  # migrations, subscriptions
            graphql = f"http://127.0.0.1:{port}/graphql"
            ready = asyncio.run(prepare_reviews(graphql, orgs))
            note(f"slack_workspaces: {RATE:.0f} commands/s for {seconds:.0f} s over "
                 f"{count} workspace(s), from {time.monotonic() - up:.0f} s after the start")
            with busy_machine():
                acks = asyncio.run(load(url, fake, count, seconds))
            idle(processes[-1].pid, "the commands' work")  # done after their acks
            # One client for the polls: a client each (a TLS context each) took longer than
            # the 0.1 s between them on a busy machine, so 120 s of polls lasted minutes.
            with httpx.Client() as poll:
                before = review_dms(poll, fake, count)
                started = time.perf_counter()
                asyncio.run(submit_all(graphql, ready))
                elapsed = float("inf")
                while time.perf_counter() - started < 120:
                    if review_dms(poll, fake, count) - before >= count:
                        elapsed = time.perf_counter() - started
                        break
                    time.sleep(0.1)
                note(f"slack_workspaces: {review_dms(poll, fake, count) - before} "
                     f"review DMs for {count} submissions, by {time.monotonic() - up:.0f} s "
                     f"after the start (the first nudge ticks from "
                     f"{slack_nudges.INTERVAL_SECONDS:.0f} s)")
            # The first ticks come 60 to 120 s after the start, after the commands and the
            # review DMs (the same conditions for those as without the nudges).
            nudges = slack_nudges.wait_for_nudges(fake.base_url, token, count, up)
            stop(processes.pop())
        return acks, elapsed, nudges
    finally:
        for process in processes:
            stop(process)


def run(names: set[str]) -> Iterable[Figure]:
    seconds = float(os.environ.get("BENCH_SLACK_SECONDS", "10"))
    count = int(os.environ.get("BENCH_WORKSPACES", "100"))
    one_acks, one_dms, one_nudges = measure(1, seconds)
    many_acks, many_dms, many_nudges = measure(count, seconds)
    if "slack_workspaces_ack_p99" in names:
        figure = Figure("slack_workspaces_ack_p99", percentile(many_acks, 0.99), "ms",
                        percentile(one_acks, 0.99))
        note(f"slack_workspaces_ack_p99: {count} workspaces vs 1, ratio "
             f"{figure.ratio:.2f} (goal <= {GOAL_RATIO})")
        yield figure
    if "slack_workspaces_review_dms" in names:
        yield Figure("slack_workspaces_review_dms", many_dms, "s", one_dms)
    if slack_nudges.FIGURE in names:
        slack_nudges.goal_note(count, many_nudges, one_nudges)
        yield Figure(slack_nudges.FIGURE, many_nudges, "s", one_nudges)


if __name__ == "__main__":
    asyncio.run(serve_fake(int(sys.argv[1]), int(sys.argv[2])))
