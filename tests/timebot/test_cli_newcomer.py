"""The command line as a newcomer meets it: every option explained, every command in README,
`people list` showing everyone, `timebot serve` on an empty data dir saying what to do, and
one log format (TIMEBOT_LOG_LEVEL)."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import click
import httpx
import pytest

from shell.cli import main as cli_main
from tests.net import free_port
from tests.pg import create_pg_database, drop_pg_database, pg_url
from tests.timebot.serve_process import TIMEBOT, serve_env, serving

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow

README = Path(__file__).resolve().parents[2] / "README.md"
DEMO_PEOPLE = 9


def _commands(command: click.Command, path: tuple[str, ...] = ()) -> list[
    tuple[tuple[str, ...], click.Command]
]:
    found = [(path, command)]
    if isinstance(command, click.Group):
        for name, sub in sorted(command.commands.items()):
            found += _commands(sub, (*path, name))
    return found


def test_every_option_has_help_text() -> None:
    missing = [
        f"timebot {' '.join(path)} {'/'.join(param.opts)}"
        for path, command in _commands(cli_main)
        for param in command.params
        if isinstance(param, click.Option) and not (param.help or "").strip()
    ]
    assert not missing, f"options without help text: {missing}"


def test_readme_command_table_lists_every_command() -> None:
    readme = README.read_text()
    table = readme[readme.index("## The command"):readme.index("## Configuration")]
    leaves = [path for path, command in _commands(cli_main)
              if path and not isinstance(command, click.Group)]
    assert len(leaves) >= 9
    missing = [" ".join(path) for path in leaves if f"`timebot {' '.join(path)}" not in table]
    assert not missing, f"README's command table lacks: {missing}"
    assert "`timebot --version`" in table


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(TIMEBOT), *args], env=env, capture_output=True, text=True,
                          timeout=120, cwd=Path(env["TIMEBOT_DATA_DIR"]).parent)


@pytest.fixture(params=["sqlite", "postgresql"])
async def backend_env(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[dict[str, str]]:
    data_dir = tmp_path / "data"
    if request.param == "sqlite":
        yield serve_env(data_dir)
        return
    database = await create_pg_database()
    try:
        yield serve_env(data_dir, TIMEBOT_SERVICE_DATABASE_URL=pg_url(database))
    finally:
        await drop_pg_database(database)


def test_people_list_has_a_header_and_everyone(backend_env: dict[str, str]) -> None:
    env = backend_env
    exported = run(env, "demo", "export")
    assert exported.returncode == 0, exported.stderr
    persons = json.loads(exported.stdout)["persons"]
    assert len(persons) == DEMO_PEOPLE

    listing = run(env, "people", "list")
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    assert re.match(r"ORGANISATION\s+EMAIL\s+NAME\s+LINK\s+SLACK$", lines[0]), lines
    assert len(lines) == 1 + DEMO_PEOPLE, listing.stdout
    for person in persons:
        row = next(line for line in lines if f" {person['email']} " in line)
        assert "not yet (key issued on first use)" in row, row
        assert person["apikey"] not in listing.stdout
    assert "timebot@" not in listing.stdout  # timebot's own integration person is not shown

    ada = next(p for p in persons if p["role"] == "admin")
    linked = run(env, "people", "link", "--email", ada["email"], "--apikey", ada["apikey"])
    assert linked.returncode == 0, linked.stderr
    lines = run(env, "people", "list").stdout.splitlines()
    assert len(lines) == 1 + DEMO_PEOPLE
    row = next(line for line in lines if f" {ada['email']} " in line)
    assert re.search(r"\slinked\s+-$", row), row


def _events(lines: list[str]) -> list[dict[str, object]]:
    events = []
    for line in lines:
        event = json.loads(line)  # one event a line, nothing else
        assert isinstance(event, dict) and event.get("event") and event.get("level"), line
        events.append(event)
    return events


async def test_serve_without_organisation_says_how_and_logs_one_format(tmp_path: Path) -> None:
    port = free_port()
    env = serve_env(tmp_path / "data", TIMEBOT_HTTP_PORT=str(port), TIMEBOT_SMTP_PORT="0")
    async with serving(env, cwd=tmp_path) as served:
        async with httpx.AsyncClient(timeout=10) as http:
            assert (await http.get(f"{served.base}/healthz")).status_code == 200
        for _ in range(100):  # the access event follows the answer
            if any('"/healthz"' in line and "http_request" in line for line in served.err):
                break
            await asyncio.sleep(0.05)
    assert (
        "No organisation yet: run `timebot service init --org … --admin-name … "
        "--admin-email …` or `timebot serve --demo`"
    ) in "".join(served.out)
    events = _events(served.err)
    assert not [e for e in events if str(e.get("logger", "")).startswith("alembic")], events
    assert not [e for e in events if str(e.get("logger", "")).startswith("httpx")], events
    without_time = [json.dumps({k: v for k, v in e.items() if k != "timestamp"}, sort_keys=True)
                    for e in events if e.get("event") != "http_request"]
    assert len(without_time) == len(set(without_time)), "a line logged twice"
    started = [e for e in events if e["event"] == "started"]
    assert len(started) == 1
    health = [e for e in events if e["event"] == "http_request" and e.get("path") == "/healthz"]
    assert health and health[-1]["status"] == 200 and health[-1]["method"] == "GET", events


async def test_log_level_is_the_operators(tmp_path: Path) -> None:
    env = serve_env(tmp_path / "data", TIMEBOT_HTTP_PORT=str(free_port()),
                    TIMEBOT_SMTP_PORT="0", TIMEBOT_LOG_LEVEL="warning")
    async with serving(env, "--demo", cwd=tmp_path) as served:
        pass
    assert not [e for e in _events(served.err) if e["level"] in ("info", "debug")], served.err

    bad = run({**env, "TIMEBOT_LOG_LEVEL": "loud"}, "serve")
    assert bad.returncode == 1
    assert "TIMEBOT_LOG_LEVEL must be one of debug, info, warning, error, critical, not 'loud'" \
        in bad.stderr
