"""The organisations of bench.scale: N people (one approver per ten, each the people manager
of their ten, a `ppm` approval stage), each with a day of time in one week and that week's
timesheet submitted, waiting for their approver.

People and manager relations are written in one transaction with the provisioning functions
(what `timebot service import` uses); each person's time record and submission go through
the service's real GraphQL execution (`Executor.run`, the person's own key), so the pending
approvals, audit rows and webhook deliveries are the ones the service makes.

Seeds are cached per size and seed code in BENCH_CACHE (default $TMPDIR/timebot-bench-scale):
a SQLite file, and for PostgreSQL a template database `timebot_scale_<N>_<hash>_a` holding the
SQLite seed's rows (copied table by table: seconds), vacuumed and analysed; each run gets a
copy (a file copy, `CREATE DATABASE ... TEMPLATE`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from bench.common import note
from plumbing.db import create_engine, unit_of_work
from service.db import migrate
from service.embedded import EmbeddedService
from service.organisation.provisioning import add_person, create_organisation
from service.people.models import PersonManager

SEED_VERSION = "1"
TEAM = 10
WEEK = 1_772_409_600_000  # Monday 2 March 2026, 00:00 UTC
DAY = 86_400_000
HOUR = 3_600_000
# A person's day of time and the week's submission: one request (one key lookup, one
# transaction; each mutation with its audit row in a savepoint, as the service runs them).
RECORD_AND_SUBMIT = """mutation($p: SvcId!, $r: SvcTimestamp!, $s: SvcTimestamp!,
  $e: SvcTimestamp!) {
  addTimeRecord(startTime: $r, duration: 28800000, personId: $p) { id }
  submitTimesheet(personId: $p, startTime: $s, endTime: $e) { id } }"""
PG_ADMIN_DSN = os.environ.get("TIMEBOT_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")


@dataclass
class Org:
    """What the bench needs of a seeded organisation (keys included: a bench database)."""
    people: int
    org_id: str = ""
    admin_key: str = ""
    approver_id: str = ""
    approver_key: str = ""
    team: list[str] = field(default_factory=list)  # the first approver's ten
    employees: list[str] = field(default_factory=list)


def cache_dir() -> Path:
    default = Path(tempfile.gettempdir()) / "timebot-bench-scale"
    root = Path(os.environ.get("BENCH_CACHE") or default)
    root.mkdir(parents=True, exist_ok=True)
    return root


def _fingerprint() -> str:
    """Changes with SEED_VERSION (bump it when the seed changes) and the service's migrations."""
    from service.db import MIGRATIONS_DIR

    digest = hashlib.sha256(SEED_VERSION.encode())
    for path in sorted(Path(MIGRATIONS_DIR).rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:10]


async def _gql(service: EmbeddedService, key: str, query: str, variables: dict[str, Any]) -> Any:
    response = await service.executor.run({"query": query, "variables": variables}, key)
    body: dict[str, Any] = response.body
    if body.get("errors") or body.get("permissionsErrors"):
        raise RuntimeError(str(body)[:500])
    return body["data"]


async def _seed(url: str, people: int) -> Org:
    service = EmbeddedService(url)
    await migrate(service.engine)
    org = Org(people)
    now = int(time.time() * 1000)
    started = time.perf_counter()
    try:
        async with unit_of_work(service.sessions) as session:
            created = await create_organisation(session, f"Scale {people}", "Ada",
                                                "ada@scale.example", now)
        org.org_id, org.admin_key = created.organisation.id, created.apikey
        keys: list[tuple[str, str]] = []
        async with unit_of_work(service.sessions) as session:
            approvers: list[str] = []
            for n in range(max(1, people // TEAM)):
                approver, key = await add_person(session, org.org_id, f"Approver {n}",
                                                 f"a{n}@scale.example", "manager", now)
                approvers.append(approver.id)
                if n == 0:
                    org.approver_id, org.approver_key = approver.id, key
            for n in range(people - len(approvers)):
                person, key = await add_person(session, org.org_id, f"Person {n}",
                                               f"p{n}@scale.example", "employee", now)
                keys.append((person.id, key))
                session.add(PersonManager(organisation_id=org.org_id,
                                          manager_id=approvers[n // TEAM % len(approvers)],
                                          person_id=person.id, created_ms=now))
        org.employees = [p for p, _k in keys]
        org.team = org.employees[:TEAM]
        await _gql(service, org.admin_key, "mutation($s: [SvcApprovalStageInput]) { "
                   "editOrganisationApprovalStages(stages: $s) { id } }",
                   {"s": [{"type": "ppm", "quorum": "any"}]})
        for person_id, key in keys:
            await _gql(service, key, RECORD_AND_SUBMIT, {
                "p": person_id, "r": WEEK + DAY + 9 * HOUR, "s": WEEK, "e": WEEK + 7 * DAY})
    finally:
        await service.stop()
    note(f"seeded {people} people in {time.perf_counter() - started:.1f} s")
    return org


async def _pg(statement: str) -> bool:
    import asyncpg

    connection = await asyncpg.connect(PG_ADMIN_DSN)
    try:
        if statement.startswith("SELECT"):
            return bool(await connection.fetchval(statement))
        await connection.execute(statement)
        return True
    finally:
        await connection.close()


async def _vacuum_analyze(name: str) -> None:
    import asyncpg

    connection = await asyncpg.connect(f"{PG_ADMIN_DSN.rsplit('/', 1)[0]}/{name}")
    try:
        await connection.execute("VACUUM ANALYZE")
    finally:
        await connection.close()


def _pg_url(name: str) -> str:
    base = PG_ADMIN_DSN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://")
    return f"{base}/{name}"


async def _copy_rows(source_url: str, target_url: str) -> int:
    """Every row of the service's tables, from the SQLite seed into a migrated PostgreSQL
    database (parents first): the rows the service wrote, on the other database. A table the
    migration has written already (the releases it recorded) keeps its own rows."""
    from service.model_base import Base

    target = create_engine(target_url)
    source = create_engine(source_url, read_only=True)
    copied = 0
    try:
        await migrate(target)
        async with source.connect() as reading, target.begin() as writing:
            for table in Base.metadata.sorted_tables:
                if await writing.scalar(select(func.count()).select_from(table)):
                    continue
                rows = [dict(row._mapping) for row in (await reading.execute(select(table)))]
                for first in range(0, len(rows), 2000):
                    await writing.execute(table.insert(), rows[first:first + 2000])
                copied += len(rows)
    finally:
        await source.dispose()
        await target.dispose()
    return copied


def _sqlite_seed(people: int) -> tuple[Path, Path]:
    tag = f"{people}_{_fingerprint()}"
    return cache_dir() / f"scale_sqlite_{tag}.db", cache_dir() / f"scale_sqlite_{tag}.json"


async def _cached_sqlite(people: int) -> tuple[Path, Path]:
    cached, meta = _sqlite_seed(people)
    if not (cached.exists() and meta.exists()):
        partial = cached.with_suffix(".partial")
        partial.unlink(missing_ok=True)
        org = await _seed(f"sqlite+aiosqlite:///{partial}", people)
        meta.write_text(json.dumps(asdict(org)))
        partial.rename(cached)
    return cached, meta


def template_name(people: int) -> str:
    """The PostgreSQL template of a size. "_a": analysed (the planner's statistics, as a
    production database's autovacuum keeps them; rows copied without them planned the
    10,000's indexed reads as scans: an approver's pending list 11 ms -> 7 ms once analysed)."""
    return f"timebot_scale_{people}_{_fingerprint()}_a"


async def seeded(people: int, database: str, target: Path) -> tuple[Org, str]:
    """A fresh copy of the seeded organisation of `people`: (the org, its service database
    URL). SQLite: a file in `target`; PostgreSQL: a new database (drop it with `drop`), from a
    template holding the SQLite seed's rows (seeding through the service twice would double
    the hours of a large size for the same rows)."""
    cached, meta = await _cached_sqlite(people)
    if database == "postgresql":
        template = template_name(people)
        pg_meta = cache_dir() / f"scale_postgresql_{people}_{_fingerprint()}_a.json"
        exists = await _pg(f"SELECT 1 FROM pg_database WHERE datname = '{template}'")
        if not (exists and pg_meta.exists()):
            await _pg(f'DROP DATABASE IF EXISTS "{template}" WITH (FORCE)')
            await _pg(f'CREATE DATABASE "{template}"')
            started = time.perf_counter()
            rows = await _copy_rows(f"sqlite+aiosqlite:///{cached}", _pg_url(template))
            await _vacuum_analyze(template)
            note(f"copied the {people} people's {rows} rows to PostgreSQL in "
                 f"{time.perf_counter() - started:.1f} s")
            pg_meta.write_text(meta.read_text())
        name = f"timebot_bench_{uuid.uuid4().hex[:12]}"
        await _pg(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
        return Org(**json.loads(pg_meta.read_text())), _pg_url(name)
    copy = target / "service.db"
    shutil.copyfile(cached, copy)
    return Org(**json.loads(meta.read_text())), f"sqlite+aiosqlite:///{copy}"


async def drop(url: str) -> None:
    if url.startswith("postgresql"):
        await _pg(f'DROP DATABASE IF EXISTS "{url.rsplit("/", 1)[1]}" WITH (FORCE)')
