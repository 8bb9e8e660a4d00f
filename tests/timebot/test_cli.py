"""The `timebot` command, run as a subprocess the way people and scripts run it."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import httpx
import pytest

from shell.cli import main as cli_main
from tests.net import free_port
from tests.pg import create_pg_database, drop_pg_database, pg_url
from tests.support import LOOPBACK_ALLOWED, start_live_server, stop_live_server

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow

TIMEBOT = Path(sys.executable).with_name("timebot")
CURRENT_PERSON = "{ currentPerson { id name email } }"
PERSON_KEYS = {"id", "name", "email", "role", "apikey", "legacyToken"}
DEMO_KEYS = {"organisation", "persons", "projects", "tasks", "absenceTypes", "expenseTypes"}


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        assert self.code == 0, self.err
        return json.loads(self.out)


def cli_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """The caller's environment without any timebot or Slack settings, on its own data dir."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("TIMEBOT_", "SLACK_"))
    }
    env.update(TIMEBOT_DATA_DIR=str(data_dir), TIMEBOT_SMTP_PORT="0",
               TIMEBOT_OUTBOUND_ALLOWED_NETWORKS=LOOPBACK_ALLOWED, **extra)
    return env


async def timebot(env: dict[str, str], *args: str, cwd: Path | None = None) -> Run:
    process = await asyncio.create_subprocess_exec(
        str(TIMEBOT),
        *args,
        env=env,
        cwd=str(cwd or Path(env["TIMEBOT_DATA_DIR"]).parent),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode is not None
    return Run(process.returncode, out.decode(), err.decode())


async def current_person(http: httpx.AsyncClient, url: str, apikey: str) -> dict[str, Any]:
    response = await http.post(url, json={"query": CURRENT_PERSON}, headers={"apikey": apikey})
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=30) as client:
        yield client


def _command_paths(command: click.Command, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = [path]
    if isinstance(command, click.Group):
        for name, sub in sorted(command.commands.items()):
            paths += _command_paths(sub, (*path, name))
    return paths


async def test_every_command_explains_itself(tmp_path: Path) -> None:
    env = cli_env(tmp_path / "data")
    paths = _command_paths(cli_main)
    expected = {("serve",), ("demo", "export"), ("service", "init"), ("service", "apikey"),
                ("people", "link"), ("people", "list")}
    assert expected <= set(paths)
    runs = await asyncio.gather(*(timebot(env, *path, "--help") for path in paths))
    for path, run in zip(paths, runs, strict=True):
        assert run.code == 0, (path, run.err)
        assert run.out.startswith(f"Usage: timebot {' '.join(path)}".rstrip()), (path, run.out)
        description = run.out.split("\n\n", 2)[1].strip()
        assert description and not description.startswith("Options:"), (path, run.out)
    top = dict(zip(paths, runs, strict=True))[()].out
    for name in ("serve", "demo", "service", "people"):
        assert re.search(rf"^\s+{name}\s+\S", top, re.MULTILINE), top
    init_help = dict(zip(paths, runs, strict=True))[("service", "init")].out
    for option in ("--org", "--admin-name", "--admin-email"):
        assert option in init_help
    assert "--demo" in dict(zip(paths, runs, strict=True))[("serve",)].out
    assert "--reset" in dict(zip(paths, runs, strict=True))[("service", "apikey")].out


async def test_unknown_command_fails(tmp_path: Path) -> None:
    run = await timebot(cli_env(tmp_path / "data"), "frobnicate")
    assert run.code == 2
    assert "No such command" in run.err


async def _init(env: dict[str, str], org: str, name: str, email: str) -> dict[str, Any]:
    created = (
        await timebot(env, "service", "init", "--org", org, "--admin-name", name,
                      "--admin-email", email)
    ).json()
    assert set(created) == {"organisation", "admin"}
    assert set(created["organisation"]) == {"id"}
    assert set(created["admin"]) == {"id", "email", "apikey", "legacyToken"}
    assert re.fullmatch(r"[0-9a-f]{24}", created["organisation"]["id"])
    assert re.fullmatch(r"[0-9a-f]{24}", created["admin"]["id"])
    assert created["admin"]["email"] == email.lower()
    assert created["admin"]["apikey"]
    return created


async def test_service_init_and_apikey_on_sqlite(tmp_path: Path, http: httpx.AsyncClient) -> None:
    data_dir = tmp_path / "data"
    env = cli_env(data_dir)
    created = await _init(env, "Initech", "Peter Gibbons", "Peter@Initech.example")
    key = created["admin"]["apikey"]

    live = await start_live_server("sqlite", data_dir)
    try:
        body = await current_person(http, live.graphql_url, key)
        assert body["data"]["currentPerson"] == {
            "id": created["admin"]["id"],
            "name": "Peter Gibbons",
            "email": "peter@initech.example",
        }

        # The key on record, then a fresh one: the old key stops working at once.
        shown = await timebot(env, "service", "apikey", "--email", "peter@initech.example")
        assert shown.code == 0, shown.err
        assert shown.out.strip() == key
        reset = await timebot(env, "service", "apikey", "--email", "peter@initech.example",
                              "--reset")
        assert reset.code == 0, reset.err
        new_key = reset.out.strip()
        assert new_key and new_key != key
        assert (await current_person(http, live.graphql_url, key))["errors"][0]["message"] == (
            "APIKeyError:InvalidKey"
        )
        body = await current_person(http, live.graphql_url, new_key)
        assert body["data"]["currentPerson"]["id"] == created["admin"]["id"]

        # An organisation created while the server runs is served at once.
        other = await _init(env, "Initrode", "Peter Gibbons", "peter@initech.example")
        body = await current_person(http, live.graphql_url, other["admin"]["apikey"])
        assert body["data"]["currentPerson"]["id"] == other["admin"]["id"]

        # The same e-mail in two organisations: --org picks one.
        ambiguous, picked, unknown = await asyncio.gather(
            timebot(env, "service", "apikey", "--email", "peter@initech.example"),
            timebot(env, "service", "apikey", "--email", "peter@initech.example",
                    "--org", other["organisation"]["id"]),
            timebot(env, "service", "apikey", "--email", "nobody@initech.example"),
        )
        assert ambiguous.code != 0
        assert "--org" in ambiguous.err
        assert created["organisation"]["id"] in ambiguous.err
        assert other["organisation"]["id"] in ambiguous.err
        assert picked.code == 0, picked.err
        assert picked.out.strip() == other["admin"]["apikey"]
        assert unknown.code != 0
        assert "nobody@initech.example" in unknown.err
    finally:
        await stop_live_server(live)


async def test_service_init_and_apikey_on_postgresql(
    tmp_path: Path, http: httpx.AsyncClient
) -> None:
    database = await create_pg_database()
    try:
        data_dir = tmp_path / "data"
        env = cli_env(data_dir, TIMEBOT_SERVICE_DATABASE_URL=pg_url(database))
        created = await _init(env, "Globex", "Hank Scorpio", "hank@globex.example")
        shown = await timebot(env, "service", "apikey", "--email", "hank@globex.example")
        assert shown.out.strip() == created["admin"]["apikey"]
        assert not (data_dir / "service.db").exists()  # nothing went to SQLite

        live = await start_live_server(
            "sqlite", data_dir, {"TIMEBOT_SERVICE_DATABASE_URL": pg_url(database)}
        )
        try:
            body = await current_person(http, live.graphql_url, created["admin"]["apikey"])
            assert body["data"]["currentPerson"]["name"] == "Hank Scorpio"
        finally:
            await stop_live_server(live)
    finally:
        await drop_pg_database(database)


def _check_demo_shape(demo: dict[str, Any]) -> None:
    assert set(demo) == DEMO_KEYS
    assert re.fullmatch(r"[0-9a-f]{24}", demo["organisation"]["id"])
    assert demo["organisation"]["name"]
    persons = demo["persons"]
    assert len(persons) >= 6
    for person in persons:
        assert set(person) == PERSON_KEYS
        assert person["apikey"] and person["legacyToken"]
    roles = [person["role"] for person in persons]
    assert roles.count("admin") == 1 and roles.count("manager") >= 2
    assert roles.count("employee") >= 3
    assert len({person["apikey"] for person in persons}) == len(persons)
    for section in ("projects", "tasks", "absenceTypes", "expenseTypes"):
        assert demo[section], section
        for item in demo[section]:
            assert re.fullmatch(r"[0-9a-f]{24}", item["id"]) and item["name"], item
    project_ids = {project["id"] for project in demo["projects"]}
    assert any(project["parentId"] in project_ids for project in demo["projects"])  # nested
    assert {"day"} <= {absence["unit"] for absence in demo["absenceTypes"]}


async def test_demo_export_is_idempotent(tmp_path: Path) -> None:
    env = cli_env(tmp_path / "data")
    first = (await timebot(env, "demo", "export")).json()
    _check_demo_shape(first)
    second = (await timebot(env, "demo", "export")).json()
    assert second == first


async def _read_lines(stream: asyncio.StreamReader, into: list[str]) -> None:
    while line := await stream.readline():
        into.append(line.decode(errors="replace"))


async def test_serve_demo(tmp_path: Path, http: httpx.AsyncClient) -> None:
    port = free_port()
    env = cli_env(tmp_path / "data", TIMEBOT_HTTP_PORT=str(port), TIMEBOT_HTTP_HOST="127.0.0.1")
    process = await asyncio.create_subprocess_exec(
        str(TIMEBOT), "serve", "--demo",
        env=env, cwd=str(tmp_path),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    out: list[str] = []
    err: list[str] = []
    readers = [
        asyncio.create_task(_read_lines(process.stdout, out)),
        asyncio.create_task(_read_lines(process.stderr, err)),
    ]
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            if process.returncode is not None:
                break
            try:
                if (await http.get(f"{base}/healthz", timeout=2)).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)
        else:
            pytest.fail("timebot serve --demo did not become healthy in 60 s")
        assert process.returncode is None, "".join(out + err)

        printed = "".join(out)
        assert f"{base}/graphql" in printed, printed
        assert f"{base}/healthz" in printed
        rows = re.findall(r"^\s+(\w+)\s+(\S+@\S+)\s+apikey\s+([0-9a-f]+)\s*$", printed, re.M)
        keys = {email: key for _role, email, key in rows}
        assert len(keys) >= 6, printed
        admin_line = re.search(r"^\s+admin\s+(\S+@\S+)\s+apikey\s+([0-9a-f]+)", printed, re.M)
        assert admin_line, printed
        admin_email, admin_key = admin_line.group(1), admin_line.group(2)

        body = await current_person(http, f"{base}/graphql", admin_key)
        assert body["data"]["currentPerson"]["email"] == admin_email
        shown = (await http.post(f"{base}/graphql", headers={"apikey": admin_key}, json={
            "query": "{ currentOrganisation { relations { scheduleTimeline { value { name } } } "
                     "publicHolidays { value { code } } } }"})).json()["data"]
        assert shown["currentOrganisation"]["publicHolidays"]["value"]["code"] == "DE"
        assert shown["currentOrganisation"]["relations"]["scheduleTimeline"][0]["value"][
            "name"].startswith("Office week")
        assert (await http.get(f"{base}/graphql")).status_code == 200
        allowances = await http.post(
            f"{base}/graphql", headers={"apikey": keys["alan@northwind.example"]},
            json={"query": "{ currentPerson { absenceQuotas { value { available recurrent "
                           "absenceType { name accrual { isEnabled quantity } } } } } }"})
        assert allowances.json()["data"]["currentPerson"]["absenceQuotas"]["value"] == [
            {"available": 10, "recurrent": True, "absenceType": {
                "name": "Vacation", "accrual": {"isEnabled": True, "quantity": 1.5}}}]
        await _second_organisation_in_its_own_workspace(http, base, printed)
        await _teams_beside_slack(http, printed)
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), timeout=30)
        except TimeoutError:
            process.kill()
            await process.wait()
        await asyncio.gather(*readers)
    assert process.returncode == 0, "".join(err)

    # The printed keys are the demo organisation's, and a second start does not seed again.
    exported = (await timebot(env, "demo", "export")).json()
    assert {p["email"]: p["apikey"] for p in exported["persons"]} == keys


async def _teams_beside_slack(http: httpx.AsyncClient, printed: str) -> None:
    """#42: the demo organisation's tenant on a fake Teams: written to from the fake's page (a
    signed activity), the bot answers there."""
    fake = re.search(r"write to the bot as one of its people: (http://127\.0\.0\.1:\d+)/",
                     printed)
    assert fake, printed
    page = (await http.get(fake.group(1) + "/")).text
    user = re.search(r'<option value="([^"]+)">', page)
    assert user, page
    said = await http.post(fake.group(1) + "/say", data={"user": user.group(1), "text": "help"})
    assert said.status_code == 303
    for _ in range(300):
        page = (await http.get(fake.group(1) + "/")).text
        if "timesheet submit" in page:
            break
        await asyncio.sleep(0.1)
    assert "timesheet submit" in page, page


async def _second_organisation_in_its_own_workspace(
    http: httpx.AsyncClient, base: str, printed: str,
) -> None:
    """#27: the demo's second organisation, whose workspace is a fake Slack on loopback: Ken's
    submission reaches Hedy there as a DM (and the page lists it, escaped)."""
    assert "Second organisation: Globex Labs (demo)" in printed, printed
    fake = re.search(r"what timebot sends there: (http://127\.0\.0\.1:\d+)/", printed)
    ken = re.search(r"ken@globex\.example \(employee\): apikey ([0-9a-f]+)", printed)
    assert fake and ken, printed
    graphql, key = f"{base}/graphql", ken.group(1)

    async def gql(query: str) -> Any:
        answer = (await http.post(graphql, headers={"apikey": key},
                                  json={"query": query})).json()
        assert not answer.get("errors"), answer
        return answer["data"]

    me = (await gql("{ currentPerson { id } }"))["currentPerson"]["id"]
    day, now = 86_400_000, int(time.time() * 1000)
    monday = (now - (now // day + 3) % 7 * day) // day * day
    await gql(f'mutation {{ addTimeRecord(startTime: {monday + 9 * 3_600_000}, '
              f'duration: 7200000, personId: "{me}") {{ id }} }}')
    await gql(f'mutation {{ submitTimesheet(personId: "{me}", startTime: {monday}, '
              f'endTime: {monday + 7 * day}) {{ id }} }}')
    page = ""
    for _ in range(300):
        page = (await http.get(fake.group(1) + "/")).text
        if "chat.postMessage" in page:
            break
        await asyncio.sleep(0.1)
    assert "Ken Thompson submitted the timesheet" in page, page
    # The fake answers only its own token.
    refused = await http.post(fake.group(1) + "/api/auth.test",
                              headers={"authorization": "Bearer xoxb-guess"})
    assert refused.json() == {"ok": False, "error": "invalid_auth"}
