"""Make a release's upgrade fixture: `python -m tests.upgrade.make_fixture VERSION` from the
repository's root (the venv's python; PostgreSQL on TIMEBOT_TEST_PG). The release's own code
(tests/upgrade/releases.py) is started on a fresh SQLite data dir and on two fresh PostgreSQL
databases, filled through its public interfaces (fill.py) and stopped; what it left is written
to tests/upgrade/fixtures/VERSION/:

  sqlite/service.db.gz, sqlite/bot.db.gz   the SQLite files (WAL checkpointed), gzip'd
  sqlite/outbox.tar.gz                     the Maildir outbox of the data dir
  postgresql/service.sql.gz, bot.sql.gz    `pg_dump --no-owner` of each database, gzip'd
  manifest.json                            what test_upgrade_from_releases.py checks"""

from __future__ import annotations

import asyncio
import gzip
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.pg import create_pg_database, drop_pg_database
from tests.support import TEST_SECRET_KEY
from tests.upgrade.fill import fill, sqlite_checkpoint
from tests.upgrade.harness import Instance
from tests.upgrade.releases import RELEASES
from tests.upgrade.rows import pg_dsn, pg_tables, sqlite_tables

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def gzip_file(source: Path, target: Path) -> None:
    with source.open("rb") as read, gzip.GzipFile(target, "wb", mtime=0) as write:
        shutil.copyfileobj(read, write)


async def _sqlite(version: str, work: Path, out: Path) -> dict[str, Any]:
    instance = Instance("sqlite", work / "var", version)
    filled = await fill(instance)
    filled["made_ms"] = int(time.time() * 1000)
    return {**filled, "tables": await asyncio.to_thread(_write_sqlite, instance.data_dir, out)}


def _write_sqlite(data_dir: Path, out: Path) -> dict[str, Any]:
    out.mkdir(parents=True)
    tables = {}
    for name in ("service", "bot"):
        path = data_dir / f"{name}.db"
        sqlite_checkpoint(path)
        tables[name] = sqlite_tables(path)
        gzip_file(path, out / f"{name}.db.gz")
    with tarfile.open(out / "outbox.tar.gz", "w:gz") as tar:
        tar.add(data_dir / "outbox", arcname="outbox")
    others = [p.name for p in data_dir.iterdir() if not p.name.startswith(("outbox", "service.db",
                                                                           "bot.db"))]
    assert others == [], f"the data dir holds more than the fixture keeps: {others}"
    return tables


async def _postgresql(version: str, work: Path, out: Path) -> dict[str, Any]:
    databases = [await create_pg_database(), await create_pg_database()]
    try:
        instance = Instance("postgresql", work / "var", version, databases)
        filled = await fill(instance)
        filled["made_ms"] = int(time.time() * 1000)
        tables = {name: await pg_tables(database)
                  for name, database in zip(("service", "bot"), databases, strict=True)}
        await asyncio.to_thread(_write_dumps, databases, out)
        return {**filled, "tables": tables}
    finally:
        for database in databases:
            await drop_pg_database(database)


def _write_dumps(databases: list[str], out: Path) -> None:
    out.mkdir(parents=True)
    for name, database in zip(("service", "bot"), databases, strict=True):
        dump = subprocess.run(
            ["pg_dump", "--no-owner", "--no-privileges", "--no-comments", pg_dsn(database)],
            check=True, capture_output=True).stdout
        with gzip.GzipFile(out / f"{name}.sql.gz", "wb", mtime=0) as write:
            write.write(dump)


async def make(version: str) -> Path:
    target = FIXTURES / version
    if target.exists():
        shutil.rmtree(target)
    manifest: dict[str, Any] = {"release": version, "commit": RELEASES[version],
                                "secret_key": TEST_SECRET_KEY, "backends": {}}
    for backend, make_one in (("sqlite", _sqlite), ("postgresql", _postgresql)):
        with tempfile.TemporaryDirectory(prefix=f"fixture-{backend}-") as work:
            manifest["backends"][backend] = await make_one(
                version, Path(work), target / backend)
    (target / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return target


def main() -> None:
    if len(sys.argv) != 2 or sys.argv[1] not in RELEASES:
        sys.exit(f"usage: python -m tests.upgrade.make_fixture VERSION  ({', '.join(RELEASES)})")
    target = asyncio.run(make(sys.argv[1]))
    sizes = sorted((p.stat().st_size, str(p.relative_to(target)))
                   for p in target.rglob("*") if p.is_file())
    for size, name in sizes:
        print(f"{size:>9}  {name}")
    print(f"{sum(size for size, _ in sizes):>9}  total, {target}")


if __name__ == "__main__":
    main()
