"""Setting up a large organisation: `timebot service import` of 1,000 people with managers
(a tree ten wide) and tags (two or three each, of 30), on a fresh SQLite data dir.

- people_import_1000: seconds of the command as an operator runs it (a process of its own:
  start, migrations checked, the file read and planned, the writes in batches of 200 with
  their audit rows), beside the baseline: bare SQL inserts of the same rows (people, tags,
  taggings, manager relations, one audit row each) with sqlite3's executemany in one
  transaction on a copy of the same database. The goal is under a minute. addPerson's rate
  limit (50 an hour per administrator) would take 20 hours for the same people.
  Also noted: the second run of the same file (nothing to change).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.busy import busy_machine
from bench.common import Figure, note
from plumbing.ids import new_id

FIGURES = ("people_import_1000",)
PEOPLE = 1000
TIMEBOT = Path(sys.executable).with_name("timebot")


def csv_text(count: int = PEOPLE) -> str:
    lines = ["name,e-mail,role,manager,tags"]
    for n in range(count):
        manager = f"p{(n - 1) // 10}@big.example" if n else ""
        role = "admin" if n == 0 else "manager" if n < 100 else "employee"
        tags = [f"team {n % 20}", f"site {n % 7}"] + ([f"skill {n % 3}"] if n % 2 else [])
        lines.append(f"Person {n},p{n}@big.example,{role},{manager},{';'.join(tags)}")
    return "\n".join(lines) + "\n"


def _env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TIMEBOT_", "SLACK_"))}
    env.update(TIMEBOT_DATA_DIR=str(data_dir), TIMEBOT_SMTP_PORT="0")
    return env


def run_timebot(env: dict[str, str], *args: str) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run([str(TIMEBOT), *args], env=env, capture_output=True, text=True,
                          check=False)
    elapsed = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(f"timebot {' '.join(args)}: {done.stderr}")
    return elapsed, done.stdout


def _bare_sql(database: Path, org_id: str, admin_id: str, count: int) -> float:
    """The same rows by bare SQL: roles and the tag category read, then one transaction."""
    now = int(time.time() * 1000)
    connection = sqlite3.connect(database)
    start = time.perf_counter()
    roles = dict(connection.execute(
        "SELECT kind, id FROM roles WHERE organisation_id = ?", (org_id,)).fetchall())
    category = new_id()
    ids = [new_id() for _ in range(count)]
    tag_ids: dict[str, str] = {}
    persons, taggings, managers, audit = [], [], [], []
    for n, line in enumerate(csv_text(count).splitlines()[1:]):
        name, email, role, manager, tags = line.split(",")
        persons.append((ids[n], name, email, roles[role], False, None, None, None, None, now,
                        "{}", now, org_id))
        audit.append((new_id(), "addPerson", admin_id, now,
                      json.dumps({"name": name, "email": email, "roleId": roles[role]}),
                      ids[n], json.dumps([ids[n]]), org_id))
        for tag in tags.split(";"):
            tag_id = tag_ids.setdefault(tag, new_id())
            taggings.append((new_id(), tag_id, ids[n], None, org_id))
        if manager:
            managers.append((new_id(), ids[int(manager[1:].split("@")[0])], ids[n], now, org_id))
    with connection:
        connection.execute(
            "INSERT INTO tag_categories (id, name, level_names, organisation_id) "
            "VALUES (?, 'Tags', '[]', ?)", (category, org_id))
        connection.executemany(
            "INSERT INTO tags (id, name, category_id, parent_id, level, color, archived, "
            "settings, created_ms, organisation_id) VALUES (?, ?, ?, NULL, 0, NULL, 0, '{}', "
            "?, ?)", [(i, name, category, now, org_id) for name, i in tag_ids.items()])
        connection.executemany(
            "INSERT INTO persons (id, name, email, role_id, archived, color, lang, timezone, "
            "currency, start_date_ms, settings, created_ms, organisation_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", persons)
        connection.executemany(
            "INSERT INTO person_tags (id, tag_id, person_id, start_ms, organisation_id) "
            "VALUES (?, ?, ?, ?, ?)", taggings)
        connection.executemany(
            "INSERT INTO person_managers (id, manager_id, person_id, created_ms, "
            "organisation_id) VALUES (?, ?, ?, ?, ?)", managers)
        connection.executemany(
            "INSERT INTO audit_trails (id, operation_name, person_id, timestamp_ms, arguments, "
            "response_id, response_ids, organisation_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            audit)
    elapsed = time.perf_counter() - start
    connection.close()
    return elapsed


def run(names: set[str]) -> list[Figure]:
    with tempfile.TemporaryDirectory(prefix="timebot-bench-import-") as temp:
        root = Path(temp)
        data_dir = root / "data"
        env = _env(data_dir)
        _, out = run_timebot(env, "service", "init", "--org", "Big", "--admin-name", "Operator",
                          "--admin-email", "operator@big.example")
        created = json.loads(out)
        org_id, admin_id = created["organisation"]["id"], created["admin"]["id"]
        baseline_db = root / "baseline.db"
        shutil.copy(data_dir / "service.db", baseline_db)
        file = root / "people.csv"
        file.write_text(csv_text(), encoding="utf-8")
        with busy_machine():
            seconds, out = run_timebot(env, "service", "import", "--org", org_id, str(file))
        note(out.splitlines()[-1])
        with busy_machine():
            again, out = run_timebot(env, "service", "import", "--org", org_id, str(file))
        note(f"second run: {again:.2f} s ({out.splitlines()[-1]})")
        with busy_machine():
            bare = _bare_sql(baseline_db, org_id, admin_id, PEOPLE)
        return [Figure("people_import_1000", seconds, "s", bare)]
