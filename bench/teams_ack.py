"""The Teams endpoint's ack under load, one tenant against many (#42).

- teams_ack_p99_1: p99 ms from POSTing a signed message activity (`help`) to POST
  /teams/messages to its 202, at 50 activities per second open-loop (BENCH_TEAMS_ACK_RATE,
  for BENCH_TEAMS_ACK_SECONDS, default 10 s), from the 100 users (BENCH_TEAMS_ACK_TENANTS) of
  one tenant. Goal: under 100 ms (the Bot Framework retries after 15 s).
- teams_ack_p99_100: the same from 100 tenants, each connected to its own organisation, one
  user each. Goal: under 100 ms.
- teams_ack_tenants_ratio: teams_ack_p99_100 / teams_ack_p99_1 (baseline 1: the number of
  tenants costs the ack nothing).
- teams_ack_writes_before_ack: the activities claimed in the database (the first write of an
  activity's work) by the time every ack of a burst came back, the work held from starting.
  Deterministic; must be 0: nothing is written before the ack.

Every activity is answered once (its reply, `replyToId` its id, reaches the fake Bot
Connector): a lost or doubled answer fails the bench. A running timebot (embedded service on
SQLite, in this process, behind its own uvicorn) with the Teams front on, pointed at the fake
Teams of shell/demo_teams.py (tests/bot/teams/harness.py); the load comes from a thread of its
own, every activity signed before the clock starts. The tenants are recorded as connected
directly (set-up: the consent flow is tests/bot/teams/test_tenancy.py's).
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from sqlalchemy import func, select

from bench.busy import busy_machine
from bench.common import Figure, note
from bot.teams.activities import WORK_SLOTS
from bot.teams.component import teams_of
from shell.demo_teams import FakeMember
from tests.bot.teams.harness import TeamsWorld, start_teams_world
from tests.support import new_org
from timebot.state.teams_models import TeamsClaim

FIGURES = ("teams_ack_p99_1", "teams_ack_p99_100", "teams_ack_tenants_ratio",
           "teams_ack_writes_before_ack")
GOAL_MS = 100.0


def settings() -> tuple[float, float, int]:
    return (float(os.environ.get("BENCH_TEAMS_ACK_RATE", "50")),
            float(os.environ.get("BENCH_TEAMS_ACK_SECONDS", "10")),
            int(os.environ.get("BENCH_TEAMS_ACK_TENANTS", "100")))


@dataclass
class Case:
    tenants: int
    acks_ms: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    lost: int = 0
    doubled: int = 0
    writes_before_ack: int = 0
    claimed_after: int = 0  # the same claims once the work ran (each activity's: written)

    def percentile(self, fraction: float) -> float:
        ordered = sorted(self.acks_ms)
        return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))] if ordered else 0.0


def blast(url: str, signed: list[tuple[str, bytes]], rate: float) -> tuple[list[float],
                                                                           list[int]]:
    """POST each (token, body) at `rate` per second open-loop, in a loop of this thread's own;
    each one's ack time (ms) and status."""
    async def send_all() -> tuple[list[float], list[int]]:
        acks: list[float] = [0.0] * len(signed)
        statuses: list[int] = [0] * len(signed)
        limits = httpx.Limits(max_connections=200, max_keepalive_connections=200)
        async with httpx.AsyncClient(timeout=30, limits=limits) as http:
            async def one(index: int, token: str, body: bytes) -> None:
                started = time.perf_counter()
                answer = await http.post(url, content=body, headers={
                    "content-type": "application/json", "authorization": f"Bearer {token}"})
                acks[index] = (time.perf_counter() - started) * 1000
                statuses[index] = answer.status_code

            start = time.perf_counter()
            tasks = []
            for index, (token, body) in enumerate(signed):
                delay = start + index / rate - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                tasks.append(asyncio.create_task(one(index, token, body)))
            await asyncio.gather(*tasks)
        return acks, statuses
    return asyncio.run(send_all())


def activities(world: TeamsWorld, members: list[FakeMember], count: int
               ) -> tuple[list[str], list[str], list[tuple[str, bytes]]]:
    """`count` signed `help` messages from the members in turn: their ids, the claim keys
    their work writes first, and (token, body) each."""
    ids, keys, signed = [], [], []
    for number in range(count):
        member = members[number % len(members)]
        activity = world.fake.message(member, "help")
        ids.append(str(activity["id"]))
        keys.append(f"activity:{member.tenant_id}:{activity['id']}")
        signed.append((world.fake.sign(activity), json.dumps(activity).encode()))
    return ids, keys, signed


async def answered(world: TeamsWorld, ids: list[str], case: Case, seconds: float = 300.0
                   ) -> None:
    """Wait for an answer to each activity; count those lost and doubled."""
    wanted = set(ids)
    deadline = time.monotonic() + seconds
    while True:
        replies = Counter(str(call.body.get("replyToId")) for call in world.fake.calls_to("send")
                          if call.body.get("replyToId") in wanted)
        if len(replies) == len(wanted) or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.2)
    await asyncio.sleep(0.5)  # a doubled answer would come now
    replies = Counter(str(call.body.get("replyToId")) for call in world.fake.calls_to("send")
                      if call.body.get("replyToId") in wanted)
    case.lost += len(wanted - set(replies))
    case.doubled += sum(n - 1 for n in replies.values() if n > 1)


async def claimed(world: TeamsWorld, keys: list[str]) -> int:
    """How many of these activity claims are written (teams_claims)."""
    async with world.live.app.state.runtime.read_sessions() as session:
        total = 0
        for start in range(0, len(keys), 500):
            total += int(await session.scalar(select(func.count()).select_from(TeamsClaim)
                                              .where(TeamsClaim.key.in_(keys[start:start + 500])
                                                     )) or 0)
        return total


async def run_case(world: TeamsWorld, members: list[FakeMember], rate: float, seconds: float,
                   tenants: int) -> Case:
    case = Case(tenants)
    front = teams_of(world.live.app.state.runtime)
    assert front is not None
    # A first burst, one message each, with the work held: nothing is written before the acks
    # (this also links every user, as their first message does)
    ids, keys, signed = activities(world, members, len(members))
    for _ in range(WORK_SLOTS):
        await front.work.slots.acquire()
    try:
        _acks, statuses = await asyncio.to_thread(blast, world.url, signed, rate)
        case.writes_before_ack = await claimed(world, keys)
    finally:
        for _ in range(WORK_SLOTS):
            front.work.slots.release()
    case.statuses.update(statuses)
    await answered(world, ids, case)
    case.claimed_after = await claimed(world, keys)
    # The load, measured
    ids, _keys, signed = activities(world, members, int(rate * seconds))
    with busy_machine():
        acks, statuses = await asyncio.to_thread(blast, world.url, signed, rate)
    case.acks_ms = acks
    case.statuses.update(statuses)
    await answered(world, ids, case)
    return case


async def measure(data_dir: Path) -> tuple[Case, Case]:
    rate, seconds, tenants = settings()
    world = await start_teams_world("sqlite", data_dir, {"TIMEBOT_LOG_LEVEL": "WARNING"})
    try:
        front = teams_of(world.live.app.state.runtime)
        assert front is not None
        alone = [world.fake.add_member(world.tenant_id, (await world.org.add_member(
            f"Member {n}")).email, f"Member {n}") for n in range(tenants)]
        many = []
        for number in range(tenants):
            org = await new_org(world.live, world.http, f"Tenant {number}")
            tenant_id = str(uuid.uuid4())
            await front.tenants.connect(tenant_id, org.id, org.admin.id)
            person = await org.add_member(f"User {number}")
            many.append(world.fake.add_member(tenant_id, person.email, person.name))
        note(f"{tenants} users in one tenant, {tenants} tenants of one user; "
             f"{rate:g}/s for {seconds:g} s each")
        one = await run_case(world, alone, rate, seconds, 1)
        hundred = await run_case(world, many, rate, seconds, tenants)
        return one, hundred
    finally:
        await world.stop()


def figures(one: Case, hundred: Case) -> list[Figure]:
    ratio = hundred.percentile(0.99) / one.percentile(0.99) if one.percentile(0.99) else 0.0
    return [Figure("teams_ack_p99_1", one.percentile(0.99), "ms", GOAL_MS),
            Figure("teams_ack_p99_100", hundred.percentile(0.99), "ms", GOAL_MS),
            Figure("teams_ack_tenants_ratio", ratio, "x", 1.0),
            Figure("teams_ack_writes_before_ack",
                   float(one.writes_before_ack + hundred.writes_before_ack), "rows", 1.0)]


def run(names: set[str]) -> list[Figure]:
    with tempfile.TemporaryDirectory(prefix="timebot-bench-teams-ack-") as folder:
        one, hundred = asyncio.run(measure(Path(folder)))
    for case in (one, hundred):
        note(f"{case.tenants} tenant(s): ack p50 {case.percentile(0.5):.1f} ms, "
             f"p99 {case.percentile(0.99):.1f} ms, max {max(case.acks_ms):.1f} ms; "
             f"statuses {dict(case.statuses)}; lost {case.lost}, doubled {case.doubled}; "
             f"claimed before the ack {case.writes_before_ack}")
        if case.lost or case.doubled or set(case.statuses) != {202}:
            raise AssertionError(f"{case.tenants} tenant(s): answers lost or doubled")
    return [figure for figure in figures(one, hundred) if figure.name in names]
