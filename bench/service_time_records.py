"""Time records at scale: 1,000,000 records of 500 persons in a temporary SQLite database.

Measured through the real GraphQL execution path (`Executor.run`: authentication, parsing,
the resolvers, the result shaping), each beside the same work done by bare SQL on the same
database in the same run:
- service_time_records_person_week: median ms of one person's week (their own key);
- service_time_records_project_month: median ms of a project's month (subprojects included);
- service_time_records_count_all: median ms of countTimeRecords of everything (admin);
- service_time_records_add: addTimeRecord throughput, records/s (one request each; each path
  warmed up, then three alternating rounds).

BENCH_RECORDS (default 1000000) sets the number of records for quicker runs.

Seeding a million records (bench.time_records_seed) takes about a minute, so the seeded
database is kept (about 600 MB for a million) in BENCH_CACHE (default: timebot-bench in the
temporary directory; "off" to seed every time) under a name that changes with the migrations,
the seeding code and the number of records; each run works on its own copy. Only the newest
one is kept.
BENCH_BUSY=N takes every figure on a busy machine (bench.busy), the seeding on a quiet one.
"""

from __future__ import annotations

import asyncio
import os
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from bench.busy import busy_machine
from bench.common import Figure, median, note
from bench.time_records_seed import DAY_MS, HOUR_MS, PERSONS, START_MS, World, seeded
from service.embedded import EmbeddedService

FIGURES = (
    "service_time_records_person_week",
    "service_time_records_project_month",
    "service_time_records_count_all",
    "service_time_records_add",
)

ROUNDS = 100
ADDS = 200
ADD_ROUNDS = 3
WARM_ADDS = 100

WEEK_QUERY = """query($s: SvcTimestamp, $e: SvcTimestamp) {
  getTimeRecords(startTime: $s, endTime: $e) {
    id startTime { ts } endTime { ts } duration comment nonBillable wfh
    person { id name } projects { id name } task { id name } absence { id name }
  }
}"""
PROJECT_QUERY = """query($s: SvcTimestamp, $e: SvcTimestamp, $p: [SvcId]) {
  getTimeRecords(startTime: $s, endTime: $e, filter: [{projectIds: $p}]) {
    id startTime { ts } endTime { ts } duration comment nonBillable wfh
    person { id name } projects { id name } task { id name } absence { id name }
  }
}"""
COUNT_QUERY = "{ countTimeRecords }"
ADD_QUERY = """mutation($s: SvcTimestamp!, $p: SvcId!, $pr: [SvcId]) {
  addTimeRecord(startTime: $s, duration: 3600000, personId: $p, projectIds: $pr) { id }
}"""

RECORD_SQL = """
SELECT r.id, r.start_ms, r.end_ms, r.duration_ms, r.comment, r.non_billable, r.wfh,
       p.id, p.name, t.id, t.name, a.id, a.name
FROM time_records r
JOIN persons p ON p.id = r.person_id
LEFT JOIN tasks t ON t.id = r.task_id
LEFT JOIN absence_types a ON a.id = r.absence_id
WHERE r.organisation_id = ? AND {where}
ORDER BY r.start_ms, r.id
"""
PROJECTS_SQL = """
SELECT l.time_record_id, pr.id, pr.name FROM time_record_projects l
JOIN projects pr ON pr.id = l.project_id WHERE l.time_record_id IN ({marks})
"""


async def _graphql(service: EmbeddedService, query: str, variables: dict[str, Any],
                   key: str) -> dict[str, Any]:
    response = await service.executor.run({"query": query, "variables": variables}, key)
    body = response.body
    if body.get("errors") or body.get("permissionsErrors"):
        raise RuntimeError(f"benchmark query failed: {body}")
    return body["data"]  # type: ignore[no-any-return]


async def _bare_records(engine: AsyncEngine, org_id: str, where: str,
                        params: tuple[Any, ...]) -> int:
    async with engine.connect() as connection:
        rows = (await connection.exec_driver_sql(
            RECORD_SQL.format(where=where), (org_id, *params))).all()
        ids = [row[0] for row in rows]
        projects: dict[str, list[tuple[str, str]]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            result = await connection.exec_driver_sql(
                PROJECTS_SQL.format(marks=marks), tuple(chunk)
            )
            for link in result.tuples():
                record_id, project_id, name = tuple(link)
                projects.setdefault(str(record_id), []).append((str(project_id), str(name)))
    return len(rows)


async def _timed(call: Any) -> float:
    began = time.perf_counter()
    await call
    return (time.perf_counter() - began) * 1000


async def measure(selected: set[str]) -> list[Figure]:
    total = int(os.environ.get("BENCH_RECORDS", "1000000"))
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="bench-timerecords-") as tmp:
        path = Path(tmp) / "service.db"
        service, world = await seeded(path, total)
        try:
            engine = service.engine
            rng = random.Random(11)
            weeks = max(1, world.days // 7)

            if "service_time_records_person_week" in selected:
                graph: list[float] = []
                bare: list[float] = []
                sizes: list[float] = []
                with busy_machine():
                    for _ in range(ROUNDS):
                        who = rng.randrange(PERSONS)
                        start = START_MS + rng.randrange(weeks) * 7 * DAY_MS
                        week: dict[str, Any] = {"s": start, "e": start + 7 * DAY_MS}
                        key = world.person_keys[who]
                        began = time.perf_counter()
                        data = await _graphql(service, WEEK_QUERY, week, key)
                        graph.append((time.perf_counter() - began) * 1000)
                        sizes.append(len(data["getTimeRecords"]))
                        bare.append(await _timed(_bare_records(
                            engine, world.org_id,
                            "r.person_id = ? AND r.start_ms >= ? AND r.start_ms < ?",
                            (world.person_ids[who], start, start + 7 * DAY_MS))))
                note(f"person week: {median(sizes):.0f} records per answer")
                figures.append(Figure("service_time_records_person_week", median(graph), "ms",
                                      median(bare)))

            if "service_time_records_project_month" in selected:
                graph, bare, sizes = [], [], []
                with busy_machine():
                    for _ in range(max(5, ROUNDS // 4)):
                        project = world.top_projects[rng.randrange(len(world.top_projects))]
                        start = START_MS + rng.randrange(max(1, world.days - 30)) * DAY_MS
                        variables: dict[str, Any] = {
                            "s": start, "e": start + 30 * DAY_MS, "p": [project]}
                        began = time.perf_counter()
                        data = await _graphql(service, PROJECT_QUERY, variables, world.admin_key)
                        graph.append((time.perf_counter() - began) * 1000)
                        sizes.append(len(data["getTimeRecords"]))
                        bare.append(await _timed(_bare_records(
                            engine, world.org_id,
                            "r.start_ms >= ? AND r.start_ms < ? AND r.id IN"
                            " (SELECT l.time_record_id FROM time_record_projects l"
                            " JOIN projects pr ON pr.id = l.project_id"
                            " WHERE pr.id = ? OR pr.parent_id = ?)",
                            (start, start + 30 * DAY_MS, project, project))))
                note(f"project month: {median(sizes):.0f} records per answer")
                figures.append(Figure("service_time_records_project_month", median(graph), "ms",
                                      median(bare)))

            if "service_time_records_count_all" in selected:
                graph, bare = [], []
                with busy_machine():
                    for _ in range(10):
                        began = time.perf_counter()
                        data = await _graphql(service, COUNT_QUERY, {}, world.admin_key)
                        graph.append((time.perf_counter() - began) * 1000)
                        began = time.perf_counter()
                        async with engine.connect() as connection:
                            counted = (await connection.exec_driver_sql(
                                "SELECT count(*) FROM time_records WHERE organisation_id = ?",
                                (world.org_id,))).scalar()
                        bare.append((time.perf_counter() - began) * 1000)
                        assert data["countTimeRecords"] == counted == total
                figures.append(Figure("service_time_records_count_all", median(graph), "ms",
                                      median(bare)))

            if "service_time_records_add" in selected:
                figures.append(await _adds(service, engine, world))
        finally:
            await service.engine.dispose()
            if service.read_engine is not service.engine:
                await service.read_engine.dispose()
    return figures


async def _adds(service: EmbeddedService, engine: AsyncEngine, world: World) -> Figure:
    """addTimeRecord through GraphQL beside the bare INSERTs: each warmed up first (untimed),
    then timed in alternating rounds. Timed cold and one after the other, the first path
    warmed the database pages and caches the second one then found warm (the GraphQL path,
    first, measured about 35% slower in its first 200 adds than in the next ones)."""
    counter = iter(range(10**9))
    who = 0

    async def graph(count: int) -> float:
        began = time.perf_counter()
        for _ in range(count):
            index = next(counter)
            adding: dict[str, Any] = {
                "s": START_MS + index * HOUR_MS, "p": world.person_ids[who],
                "pr": [world.projects[index % len(world.projects)]]}
            await _graphql(service, ADD_QUERY, adding, world.person_keys[who])
        return time.perf_counter() - began

    async def bare(count: int) -> float:
        began = time.perf_counter()
        for _ in range(count):
            index = next(counter)
            record_id = f"b{index:023x}"
            start = START_MS + index * HOUR_MS
            async with engine.begin() as connection:
                await connection.exec_driver_sql(
                    "INSERT INTO time_records (id, organisation_id, person_id,"
                    " start_ms, duration_ms, comment, non_billable, wfh, created_ms,"
                    " modified_ms, revision)"
                    " VALUES (?, ?, ?, ?, ?, '', 0, 0, ?, ?, 1)",
                    (record_id, world.org_id, world.person_ids[1], start, HOUR_MS,
                     start, start))
                await connection.exec_driver_sql(
                    "INSERT INTO time_record_projects (time_record_id, project_id)"
                    " VALUES (?, ?)",
                    (record_id, world.projects[index % len(world.projects)]))
        return time.perf_counter() - began

    await graph(WARM_ADDS)
    await bare(WARM_ADDS)
    graph_seconds = bare_seconds = 0.0
    for _ in range(ADD_ROUNDS):
        with busy_machine():
            graph_seconds += await graph(ADDS)
        with busy_machine():
            bare_seconds += await bare(ADDS)
    adds = ADDS * ADD_ROUNDS
    return Figure("service_time_records_add", adds / graph_seconds, "records/s",
                  adds / bare_seconds)


def run(selected: set[str]) -> list[Figure]:
    return asyncio.run(measure(selected))
