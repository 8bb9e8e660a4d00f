"""Time records at scale: 1,000,000 records of 500 persons in a temporary SQLite database.

Measured through the real GraphQL execution path (`Executor.run`: authentication, parsing,
the resolvers, the result shaping), each beside the same work done by bare SQL on the same
database in the same run:
- service_time_records_person_week: median ms of one person's week (their own key);
- service_time_records_project_month: median ms of a project's month (subprojects included);
- service_time_records_count_all: median ms of countTimeRecords of everything (admin);
- service_time_records_add: addTimeRecord throughput, records/s (one request each).

BENCH_RECORDS (default 1000000) sets the number of records for quicker runs.

Seeding a million records takes about a minute, so the seeded database is kept (about 600 MB
for a million) in BENCH_CACHE (default: timebot-bench in the temporary directory; "off" to
seed every time) under a name that changes with the migrations, the seeding code and the
number of records; each run works on its own copy. Only the newest one is kept.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import os
import random
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, insert
from sqlalchemy.ext.asyncio import AsyncEngine

from bench.common import Figure, median, note
from plumbing.clock import Clock
from plumbing.db import unit_of_work
from service.db import MIGRATIONS_DIR, migrate
from service.embedded import EmbeddedService
from service.models import AbsenceType, Project, Task, TaskCategory, TimeRecord
from service.models.records import time_record_projects
from service.provisioning import add_person, create_organisation

FIGURES = (
    "service_time_records_person_week",
    "service_time_records_project_month",
    "service_time_records_count_all",
    "service_time_records_add",
)

PERSONS = 500
PER_DAY = 5  # records per person per day
TOP_PROJECTS = 100  # each with two subprojects
DAY_MS = 86_400_000
HOUR_MS = 3_600_000
START_MS = 1_735_689_600_000  # 2025-01-01T00:00:00Z
ROUNDS = 100
ADDS = 200

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


class World:
    def __init__(self) -> None:
        self.org_id = ""
        self.admin_key = ""
        self.person_ids: list[str] = []
        self.person_keys: list[str] = []
        self.top_projects: list[str] = []
        self.projects: list[str] = []
        self.days = 0


def _record_rows(world: World, total: int, tasks: list[str], absences: list[str]) -> Iterable[
    tuple[list[dict[str, Any]], list[dict[str, Any]]]
]:
    """Batches of (time_records rows, link rows), in the order people would log them."""
    rng = random.Random(7)
    records: list[dict[str, Any]] = []
    links: list[dict[str, Any]] = []
    made = 0
    for day in range(world.days):
        day_start = START_MS + day * DAY_MS
        for person in world.person_ids:
            for slot in range(PER_DAY):
                if made >= total:
                    break
                record_id = f"{made + 1:024x}"
                start = day_start + (8 + slot) * HOUR_MS
                absence = absences[made % len(absences)] if made % 20 == 0 else None
                records.append({
                    "id": record_id,
                    "organisation_id": world.org_id,
                    "person_id": person,
                    "start_ms": start,
                    "end_ms": start + HOUR_MS if slot % 2 else None,
                    "duration_ms": HOUR_MS,
                    "task_id": None if absence else tasks[made % len(tasks)],
                    "absence_id": absence,
                    "comment": "",
                    "non_billable": False,
                    "wfh": slot == 4,
                    "created_ms": start,
                    "modified_ms": start,
                    "modified_by_id": person,
                    "revision": 1,
                })
                if absence is None:
                    links.append({
                        "time_record_id": record_id,
                        "project_id": world.projects[rng.randrange(len(world.projects))],
                    })
                made += 1
            if len(records) >= 50_000:
                yield records, links
                records, links = [], []
    if records:
        yield records, links


async def seed(service: EmbeddedService, path: Path, total: int) -> World:
    world = World()
    world.days = max(7, -(-total // (PERSONS * PER_DAY)))
    now = START_MS
    async with unit_of_work(service.sessions) as session:
        created = await create_organisation(session, "Bench", "Admin", "admin@bench.test", now)
        world.org_id = created.organisation.id
        world.admin_key = created.apikey
        for index in range(PERSONS):
            person, key = await add_person(
                session, world.org_id, f"Person {index:03d}", f"p{index}@bench.test",
                "employee", now,
            )
            world.person_ids.append(person.id)
            world.person_keys.append(key)
        category = TaskCategory(organisation_id=world.org_id, name="Planning", level_names=[])
        session.add(category)
        await session.flush()
        tasks = [
            Task(organisation_id=world.org_id, name=f"Task {i}", category_id=category.id,
                 created_ms=now)
            for i in range(50)
        ]
        absences = [
            AbsenceType(organisation_id=world.org_id, name=name, unit="day")
            for name in ("Vacation", "Sick", "Training")
        ]
        session.add_all([*tasks, *absences])
        for index in range(TOP_PROJECTS):
            top = Project(organisation_id=world.org_id, name=f"Project {index:03d}",
                          created_ms=now)
            session.add(top)
            await session.flush()
            world.top_projects.append(top.id)
            world.projects.append(top.id)
            for sub in range(2):
                child = Project(organisation_id=world.org_id, name=f"Project {index:03d}.{sub}",
                                parent_id=top.id, level=1, created_ms=now)
                session.add(child)
                await session.flush()
                world.projects.append(child.id)
        await session.flush()
        task_ids = [task.id for task in tasks]
        absence_ids = [absence.id for absence in absences]

    await service.engine.dispose()  # no pooled connection of the service holds the file
    began = time.perf_counter()
    engine = create_engine(f"sqlite:///{path}", connect_args={"timeout": 60})
    with engine.begin() as connection:
        connection.exec_driver_sql("PRAGMA synchronous=OFF")
        for records, links in _record_rows(world, total, task_ids, absence_ids):
            connection.execute(insert(TimeRecord.__table__), records)  # type: ignore[arg-type]
            if links:
                connection.execute(insert(time_record_projects), links)
    with engine.begin() as connection:
        connection.exec_driver_sql("ANALYZE")
    engine.dispose()
    note(f"seeded {total} time records of {PERSONS} persons over {world.days} days "
         f"in {time.perf_counter() - began:.1f} s")
    return world


def _cache_dir() -> Path | None:
    setting = os.environ.get("BENCH_CACHE", "")
    if setting.lower() in ("off", "0", "no"):
        return None
    return Path(setting) if setting else Path(tempfile.gettempdir()) / "timebot-bench"


def _cache_key(total: int) -> str:
    """Changes with anything that changes the seeded database."""
    digest = hashlib.sha256()
    for migration in sorted(MIGRATIONS_DIR.rglob("*.py")):
        digest.update(migration.read_bytes())
    for code in (seed, _record_rows, World):
        digest.update(inspect.getsource(code).encode())
    digest.update(repr((total, PERSONS, PER_DAY, TOP_PROJECTS, START_MS)).encode())
    return digest.hexdigest()[:16]


async def seeded(path: Path, total: int) -> tuple[EmbeddedService, World]:
    """The service on a seeded database at `path`: a copy of the cached one, or seeded now
    (and then cached)."""
    cache = _cache_dir()
    key = _cache_key(total)
    cached_db = cache / f"time-records-{key}.db" if cache else None
    cached_world = cached_db.with_suffix(".json") if cached_db else None
    if cached_db and cached_world and cached_db.exists() and cached_world.exists():
        began = time.perf_counter()
        shutil.copyfile(cached_db, path)
        world = World()
        world.__dict__.update(json.loads(cached_world.read_text()))
        note(f"seeded database copied from {cached_db} in {time.perf_counter() - began:.1f} s")
        service = EmbeddedService(f"sqlite+aiosqlite:///{path}", Clock())
        await migrate(service.engine)
        return service, world
    service = EmbeddedService(f"sqlite+aiosqlite:///{path}", Clock())
    # The schema only: the service's background workers (webhooks, reminders) stay off so
    # that they neither lock the file while seeding nor add noise to the figures.
    await migrate(service.engine)
    world = await seed(service, path, total)
    if cache and cached_db and cached_world:
        await service.engine.dispose()
        connection = sqlite3.connect(path)
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.close()
        cache.mkdir(parents=True, exist_ok=True)
        for old in cache.glob("time-records-*"):
            old.unlink()
        partial = cached_db.with_suffix(".partial")
        shutil.copyfile(path, partial)
        cached_world.write_text(json.dumps(world.__dict__))
        partial.rename(cached_db)
        note(f"seeded database kept in {cached_db}")
    return service, world


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
                        "r.start_ms >= ? AND r.start_ms < ? AND r.id IN (SELECT l.time_record_id"
                        " FROM time_record_projects l JOIN projects pr ON pr.id = l.project_id"
                        " WHERE pr.id = ? OR pr.parent_id = ?)",
                        (start, start + 30 * DAY_MS, project, project))))
                note(f"project month: {median(sizes):.0f} records per answer")
                figures.append(Figure("service_time_records_project_month", median(graph), "ms",
                                      median(bare)))

            if "service_time_records_count_all" in selected:
                graph, bare = [], []
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
                who = 0
                began = time.perf_counter()
                for index in range(ADDS):
                    adding: dict[str, Any] = {
                        "s": START_MS + index * HOUR_MS, "p": world.person_ids[who],
                        "pr": [world.projects[index % len(world.projects)]]}
                    await _graphql(service, ADD_QUERY, adding, world.person_keys[who])
                graph_rate = ADDS / (time.perf_counter() - began)
                began = time.perf_counter()
                for index in range(ADDS):
                    record_id = f"b{index:023x}"
                    start = START_MS + index * HOUR_MS
                    async with engine.begin() as connection:
                        await connection.exec_driver_sql(
                            "INSERT INTO time_records (id, organisation_id, person_id, start_ms,"
                            " duration_ms, comment, non_billable, wfh, created_ms, modified_ms,"
                            " revision) VALUES (?, ?, ?, ?, ?, '', 0, 0, ?, ?, 1)",
                            (record_id, world.org_id, world.person_ids[1], start, HOUR_MS,
                             start, start))
                        await connection.exec_driver_sql(
                            "INSERT INTO time_record_projects (time_record_id, project_id)"
                            " VALUES (?, ?)",
                            (record_id, world.projects[index % len(world.projects)]))
                bare_rate = ADDS / (time.perf_counter() - began)
                figures.append(Figure("service_time_records_add", graph_rate, "records/s",
                                      bare_rate))
        finally:
            await service.engine.dispose()
            if service.read_engine is not service.engine:
                await service.read_engine.dispose()
    return figures


def run(selected: set[str]) -> list[Figure]:
    return asyncio.run(measure(selected))
