"""Approvals at organisation scale (issue #26), in a temporary SQLite database, through the
real GraphQL execution path (`Executor.run`):

- approvals_pending_list: median ms of one manager's getPendingApprovals (the digest's and
  the Slack Home's read) in an organisation of 1,000 people who have all submitted a week,
  ten of them the manager's; baseline: the same at 100 people (the manager still has ten).
  Flat is a ratio near 1.
- approvals_remind_all: median ms of one sendTimesheetReminder of 1,000 people (one write
  transaction: SQLite's write lock is held that long); baseline: the same of 100 people.

BENCH_APPROVAL_PEOPLE (default 1000) sets the larger size.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.busy import busy_machine
from bench.common import Figure, median, note
from plumbing.db import unit_of_work
from service.db import migrate
from service.embedded import EmbeddedService
from service.organisation.provisioning import add_person, create_organisation

FIGURES = ("approvals_pending_list", "approvals_remind_all")
TEAM = 10
ROUNDS = 100
REMIND_ROUNDS = 5
WEEK = 1_772_409_600_000
DAY = 86_400_000

PENDING = """{ getPendingApprovals { person { id name } submitId status currentStage
  totalDuration pendingApprovers { id name } startTime { ts } endTime { ts }
  stageDetails { stage type pending { id } approvedBy { person { id } ts } } } }"""
REMIND = """mutation($p: [SvcId!]!, $s: SvcTimestamp!, $e: SvcTimestamp!) {
  sendTimesheetReminder(personIds: $p, startTime: $s, endTime: $e) }"""


class World:
    def __init__(self, service: EmbeddedService, admin_key: str) -> None:
        self.service = service
        self.admin_key = admin_key
        self.manager_key = ""
        self.people: list[str] = []

    async def gql(self, query: str, variables: dict[str, Any], key: str) -> dict[str, Any]:
        response = await self.service.executor.run({"query": query, "variables": variables},
                                                   key)
        body: dict[str, Any] = response.body
        if body.get("errors") or body.get("permissionsErrors"):
            raise RuntimeError(str(body)[:500])
        data: dict[str, Any] = body["data"]
        return data


async def _seed(service: EmbeddedService, people: int) -> World:
    now = int(time.time() * 1000)
    async with unit_of_work(service.sessions) as session:
        created = await create_organisation(session, "Bench", "Ada", "ada@example.com", now)
    world = World(service, created.apikey)
    org_id = created.organisation.id
    keys: list[tuple[str, str]] = []
    managers: list[str] = []
    async with unit_of_work(service.sessions) as session:
        for n in range(people // TEAM):
            manager, key = await add_person(session, org_id, f"M{n}", f"m{n}@example.com",
                                            "manager", now)
            managers.append(manager.id)
            if n == 0:
                world.manager_key = key
        for n in range(people):
            person, key = await add_person(session, org_id, f"P{n}", f"p{n}@example.com",
                                           "employee", now)
            keys.append((person.id, key))
    world.people = [p for p, _k in keys]
    await world.gql(
        "mutation($s: [SvcApprovalStageInput]) { editOrganisationApprovalStages(stages: $s) "
        "{ id } }", {"s": [{"type": "ppm", "quorum": "any"}]}, world.admin_key)
    for n, (person_id, key) in enumerate(keys):
        await world.gql(
            "mutation($m: SvcId!, $p: SvcId!) { makeManagerOfPerson(managerId: $m, "
            "personId: $p) { id } }", {"m": managers[n // TEAM], "p": person_id},
            world.admin_key)
        for week in (0, 1):
            await world.gql(
                "mutation($s: SvcTimestamp!, $p: SvcId!) { addTimeRecord(startTime: $s, "
                "duration: 3600000, personId: $p) { id } }",
                {"s": WEEK + week * 7 * DAY + 9 * 3_600_000, "p": person_id}, key)
        await world.gql(
            "mutation($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { submitTimesheet("
            "personId: $p, startTime: $s, endTime: $e) { id } }",
            {"p": person_id, "s": WEEK, "e": WEEK + 7 * DAY}, key)
    return world


async def _measure(people: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        service = EmbeddedService(f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}")
        await migrate(service.engine)
        try:
            note(f"seeding {people} people")
            world = await _seed(service, people)
            listed = await world.gql(PENDING, {}, world.manager_key)
            note(f"{people} people: {len(listed['getPendingApprovals'])} pending for a manager")
            for _ in range(5):  # warm: the statements built, the pages read
                await world.gql(PENDING, {}, world.manager_key)
            samples, reminds = [], []
            with busy_machine():
                for _ in range(ROUNDS):
                    started = time.perf_counter()
                    await world.gql(PENDING, {}, world.manager_key)
                    samples.append((time.perf_counter() - started) * 1000)
                variables = {"p": world.people, "s": WEEK + 7 * DAY, "e": WEEK + 14 * DAY}
                for _ in range(REMIND_ROUNDS):
                    started = time.perf_counter()
                    await world.gql(REMIND, variables, world.admin_key)
                    reminds.append((time.perf_counter() - started) * 1000)
            samples.sort()
            note(f"{people} people: pending p50 {median(samples):.2f} ms, "
                 f"p99 {samples[int(len(samples) * 0.99) - 1]:.2f} ms; "
                 f"reminder of all {median(reminds):.1f} ms")
            return median(samples), median(reminds)
        finally:
            await service.stop()


def run(names: set[str]) -> list[Figure]:
    large = int(os.environ.get("BENCH_APPROVAL_PEOPLE", "1000"))
    small_list, small_remind = asyncio.run(_measure(100))
    large_list, large_remind = asyncio.run(_measure(large))
    figures = [
        Figure("approvals_pending_list", large_list, "ms", small_list),
        Figure("approvals_remind_all", large_remind, "ms", small_remind),
    ]
    return [f for f in figures if f.name in names]
