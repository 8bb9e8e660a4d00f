"""`timebot service import`: people from a CSV file, run as a subprocess against the embedded
service's database (SQLite, PostgreSQL) while a server answers GraphQL on it."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.migrated import create_migrated_pg_database, place_migrated_sqlite
from tests.pg import drop_pg_database_soon, pg_url
from tests.support import LiveServer, start_live_server, stop_live_server
from tests.timebot.cli_in_process import timebot_in_process
from tests.timebot.signin_support import account, browser, sign_in
from tests.timebot.test_cli import TIMEBOT, Run, cli_env, timebot

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow

HEADER = "Name,E-mail,Role,Manager,Tags\n"
GOOD = (
    "Ada Boss,ada@acme.example,Admin,,HQ\n"
    "Bob Lead,Bob@Acme.example,manager,ada@acme.example,HQ;Dev\n"
    "Cy Coder,cy@acme.example,,bob@acme.example,dev|Remote\n"
    "Di Coder,di@acme.example,employee,bob@acme.example,\n"
)
BAD = (
    "Ed,ed@acme,employee,,\n"  # row 6
    "Fay,fay@acme.example,wizard,,\n"  # row 7
    "Gus,gus@acme.example,,nobody@acme.example,\n"  # row 8
    '"Hal\u202eLah",hal@acme.example,,,\n'  # row 9
    "Cy Again,CY@acme.example,,,\n"  # row 10
    "Ike,ike@acme.example,,jo@acme.example,\n"  # row 11
    "Jo,jo@acme.example,,ike@acme.example,\n"  # row 12
    "Kit,kit@acme.example,,fay@acme.example,\n"  # row 13
)
REFUSALS = [
    "refused: row 6: e-mail: 'ed@acme' is not an e-mail address",
    "refused: row 7: role: unknown role 'wizard' (the organisation's roles: Admin, Employee, "
    "Manager)",
    "refused: row 8: manager: the manager nobody@acme.example is neither in the file nor in "
    "the organisation",
    "refused: row 9: name: contains control characters",
    "refused: row 10: e-mail: duplicate e-mail cy@acme.example: already on row 4",
    "refused: row 11: manager: cycle of managers: ike@acme.example -> jo@acme.example -> "
    "ike@acme.example",
    "refused: row 12: manager: cycle of managers: jo@acme.example -> ike@acme.example -> "
    "jo@acme.example",
    "refused: row 13: manager: the manager fay@acme.example is on row 7, which is refused",
]
PEOPLE = """{ getPersons { id name email role { name }
  relations { managedBy { value { email } } } } }"""
TAGS = "{ getTags { id name } }"
TAGGED = "query($t: [SvcId]) { getPersons(filter: [{tagIds: $t}]) { email } }"
AUDIT = "query($o: [String]) { getAuditTrails(operations: $o) { operationName } }"
ADD = """mutation($e: SvcEmail!, $r: SvcId!) { addPerson(name: "Late", email: $e, roleId: $r)
  { id } }"""


@dataclass
class Setup:
    env: dict[str, str]
    live: LiveServer
    http: httpx.AsyncClient
    org_id: str
    admin_key: str
    csv: Path

    async def gql(self, query: str, variables: dict[str, Any] | None = None,
                  key: str | None = None) -> dict[str, Any]:
        response = await self.http.post(self.live.graphql_url,
                                        json={"query": query, "variables": variables or {}},
                                        headers={"apikey": key or self.admin_key})
        body: dict[str, Any] = response.json()
        assert "errors" not in body, body
        return body["data"]  # type: ignore[no-any-return]

    async def state(self) -> dict[str, tuple[str, str, tuple[str, ...], tuple[str, ...]]]:
        """email -> (name, role, managers, tags)."""
        people = (await self.gql(PEOPLE))["getPersons"]
        tags: dict[str, list[str]] = {}
        for tag in (await self.gql(TAGS))["getTags"]:
            for person in (await self.gql(TAGGED, {"t": [tag["id"]]}))["getPersons"]:
                tags.setdefault(person["email"], []).append(tag["name"])
        return {
            p["email"]: (p["name"], p["role"]["name"],
                         tuple(sorted(m["value"]["email"] for m in p["relations"]["managedBy"])),
                         tuple(sorted(tags.get(p["email"], []))))
            for p in people
        }

    async def run(self, *args: str) -> Run:
        """`timebot service import` in this process (tests.timebot.cli_in_process)."""
        return await timebot_in_process(self.env, "service", "import", "--org", self.org_id,
                                        *args)

    async def run_script(self, *args: str) -> Run:
        """`timebot service import` through the installed script, a process of its own."""
        return await timebot(self.env, "service", "import", "--org", self.org_id, *args)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[tuple[dict[str, str], LiveServer]]:
    """A server per backend, each test in an organisation of its own. Its databases are fresh
    copies of migrated ones (tests.migrated): the import is under test, not the migrations."""
    database = await create_migrated_pg_database("service") \
        if request.param == "postgresql" else None
    extra = {"TIMEBOT_SERVICE_DATABASE_URL": pg_url(database)} if database else {}
    data_dir = tmp_path_factory.mktemp("import") / "data"
    await place_migrated_sqlite(f"sqlite+aiosqlite:///{data_dir / 'bot.db'}", "timebot")
    if database is None:
        await place_migrated_sqlite(f"sqlite+aiosqlite:///{data_dir / 'service.db'}", "service")
    env = cli_env(data_dir, **extra)
    await timebot_in_process(env, "service", "init", "--org", "First", "--admin-name", "First",
                             "--admin-email", "first@acme.example")
    live = await start_live_server("sqlite", data_dir, extra)
    try:
        yield env, live
    finally:
        await stop_live_server(live)
        if database:
            drop_pg_database_soon(database)


@pytest.fixture
async def setup(
    server: tuple[dict[str, str], LiveServer], tmp_path: Path
) -> AsyncIterator[Setup]:
    env, live = server
    created = (await timebot_in_process(env, "service", "init", "--org", "Acme", "--admin-name",
                                        "Root", "--admin-email", "root@acme.example")).json()
    async with httpx.AsyncClient(timeout=60) as http:
        yield Setup(env, live, http, created["organisation"]["id"],
                    created["admin"]["apikey"], tmp_path / "people.csv")


EXPECTED = {
    "root@acme.example": ("Root", "Admin", (), ()),
    "ada@acme.example": ("Ada Boss", "Admin", (), ("HQ",)),
    "bob@acme.example": ("Bob Lead", "Manager", ("ada@acme.example",), ("Dev", "HQ")),
    "cy@acme.example": ("Cy Coder", "Employee", ("bob@acme.example",), ("Dev", "Remote")),
    "di@acme.example": ("Di Coder", "Employee", ("bob@acme.example",), ()),
}


async def test_import_refuses_bad_rows_and_is_idempotent(setup: Setup) -> None:
    setup.csv.write_text(HEADER + GOOD + BAD, encoding="utf-8")
    before = await setup.state()

    dry = await setup.run(str(setup.csv), "--dry-run")
    assert dry.code == 1, dry.err
    assert dry.err.splitlines() == REFUSALS
    assert "would add cy@acme.example (Cy Coder; Employee; manager bob@acme.example; tags " \
           "dev, Remote)" in dry.out
    assert dry.out.splitlines()[-1] == ("dry run, nothing written: would add 4, update 0, "
                                        "leave 0 unchanged; refused 8")
    assert await setup.state() == before  # nothing written
    assert (await setup.gql(TAGS))["getTags"] == []

    done = await setup.run(str(setup.csv))
    assert done.code == 1, done.err
    assert done.err.splitlines() == REFUSALS
    assert done.out.splitlines()[-1] == "added 4, updated 0, unchanged 0, refused 8"
    assert await setup.state() == EXPECTED
    audit = (await setup.gql(AUDIT, {"o": ["addPerson", "addTag", "tagPerson",
                                           "makeManagerOfPerson"]}))["getAuditTrails"]
    operations = sorted(entry["operationName"] for entry in audit)
    assert operations == sorted(["addPerson"] * 4 + ["addTag"] * 3 + ["tagPerson"] * 5
                                + ["makeManagerOfPerson"] * 3)

    again = await setup.run(str(setup.csv))
    assert again.code == 1
    assert "nothing to change" in again.out
    assert again.out.splitlines()[-1] == "added 0, updated 0, unchanged 4, refused 8"
    assert await setup.state() == EXPECTED

    # A changed row updates that person: name, manager, tags (the others stay unchanged).
    setup.csv.write_text(HEADER + GOOD.replace(
        "Cy Coder,cy@acme.example,,bob@acme.example,dev|Remote",
        "Cy Senior,cy@acme.example,manager,ada@acme.example,Remote"), encoding="utf-8")
    changed = await setup.run(str(setup.csv))
    assert changed.code == 0, changed.err
    assert changed.out.splitlines()[-1] == "added 0, updated 1, unchanged 3, refused 0"
    expected = dict(EXPECTED)
    expected["cy@acme.example"] = ("Cy Senior", "Manager", ("ada@acme.example",), ("Remote",))
    assert await setup.state() == expected

    # The imported people have API keys (and sign in with their e-mail like anyone added).
    shown = await timebot_in_process(setup.env, "service", "apikey", "--email", "cy@acme.example",
                          "--org", setup.org_id)
    assert shown.code == 0, shown.err
    me = await setup.gql("{ currentPerson { email name } }", key=shown.out.strip())
    assert me["currentPerson"] == {"email": "cy@acme.example", "name": "Cy Senior"}
    async with browser(setup.live) as client:
        await sign_in(setup.live, client, "di@acme.example")
        page, _ = await account(client)
        assert "Di Coder" in page


def _many(count: int) -> str:
    lines = [HEADER.rstrip("\n")]
    for n in range(count):
        manager = f"p{n // 10}@big.example" if n >= 10 else ""
        tags = f"team {n % 7};site {n % 3}" if n % 2 else f"team {n % 7}"
        lines.append(f"Person {n},p{n}@big.example,{'manager' if n < 30 else ''},{manager},{tags}")
    return "\n".join(lines) + "\n"


async def test_an_import_stopped_half_way_is_finished_by_running_it_again(setup: Setup) -> None:
    """Over addPerson's rate limits (50 an hour per admin, 200 per organisation): the import is
    the operator's, and leaves the admin's own quota alone."""
    setup.csv.write_text(_many(230), encoding="utf-8")
    process = await asyncio.create_subprocess_exec(
        str(TIMEBOT), "service", "import", "--org", setup.org_id, "--batch-size", "7",
        str(setup.csv), env=setup.env, cwd=str(setup.csv.parent),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    assert process.stdout is not None
    first = await asyncio.wait_for(process.stdout.readline(), timeout=120)
    assert first.startswith(b"written 7/"), first
    os.killpg(process.pid, signal.SIGKILL)  # a crash, not a clean stop
    await process.wait()

    finished = await setup.run("--batch-size", "50", str(setup.csv))
    assert finished.code == 0, finished.err
    state = await setup.state()
    assert len(state) == 231
    for n in range(230):
        manager = (f"p{n // 10}@big.example",) if n >= 10 else ()
        tags = (f"site {n % 3}", f"team {n % 7}") if n % 2 else (f"team {n % 7}",)
        assert state[f"p{n}@big.example"] == (
            f"Person {n}", "Manager" if n < 30 else "Employee", manager, tags)
    audit = (await setup.gql(AUDIT, {"o": ["addPerson"]}))["getAuditTrails"]
    assert len(audit) == 230  # each person added once

    again = await setup.run(str(setup.csv))
    assert again.out.splitlines()[-1] == "added 0, updated 0, unchanged 230, refused 0"
    role = (await setup.gql("{ getRoles { id name } }"))["getRoles"]
    employee = next(r["id"] for r in role if r["name"] == "Employee")
    added = await setup.gql(ADD, {"e": "late@big.example", "r": employee})
    assert added["addPerson"]["id"]


async def test_a_file_that_cannot_be_read_is_refused_whole(setup: Setup) -> None:
    """The first run through the installed `timebot` script (the command's other runs in these
    tests are in-process, but for the one a crash stops half-way)."""
    setup.csv.write_text("Name,Phone\nAda,123\n", encoding="utf-8")
    run = await setup.run_script(str(setup.csv))
    assert run.code == 1
    assert "unknown column 'Phone'" in run.err
    setup.csv.write_bytes(b"Name,E-mail\n\xff\xfe,x@y.example\n")
    run = await setup.run(str(setup.csv))
    assert run.code == 1 and "not UTF-8" in run.err
    setup.csv.write_text(HEADER + GOOD, encoding="utf-8")
    run = await timebot_in_process(setup.env, "service", "import", "--org", "0" * 24,
                                   str(setup.csv))
    assert run.code == 1 and f"no organisation {'0' * 24}" in run.err
