"""The seeded database of bench.service_time_records: an organisation of 500 persons, 300
projects, 50 tasks and `total` time records written straight into SQLite, kept in BENCH_CACHE
between runs (see that module)."""

from __future__ import annotations

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

from bench.common import note
from plumbing.clock import Clock
from plumbing.db import unit_of_work
from service.db import MIGRATIONS_DIR, migrate
from service.embedded import EmbeddedService
from service.models import AbsenceType, Project, Task, TaskCategory, TimeRecord
from service.organisation.provisioning import add_person, create_organisation
from service.time_records.models import time_record_projects

PERSONS = 500
PER_DAY = 5  # records per person per day
TOP_PROJECTS = 100  # each with two subprojects
DAY_MS = 86_400_000
HOUR_MS = 3_600_000
START_MS = 1_735_689_600_000  # 2025-01-01T00:00:00Z


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
