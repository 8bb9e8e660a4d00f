"""The `timebot` command starts cheaply: the suite and operators start it hundreds of times, and
each start used to import SQLAlchemy and Jinja before any subcommand was chosen. A subcommand
imports what it needs when it runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# Libraries no subcommand needs just to be chosen or to print its help.
HEAVY = ("sqlalchemy", "jinja2", "alembic", "graphql", "ariadne", "service")


def _modules_after(code: str, env: dict[str, str] | None = None) -> list[str]:
    listing = subprocess.run(
        [sys.executable, "-c", f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"],
        capture_output=True, text=True, check=True, timeout=120, env=env)
    return list(json.loads(listing.stdout.splitlines()[-1]))


def _loaded_after(code: str) -> set[str]:
    return {name.split(".")[0] for name in _modules_after(code)}


def test_importing_the_command_loads_no_database_template_or_service_library() -> None:
    assert _loaded_after("from shell.cli import main").isdisjoint(HEAVY)


def test_the_templates_command_names_its_kinds_without_jinja() -> None:
    loaded = _loaded_after(
        "from shell.cli import main\n"
        "try:\n    main(['templates', 'kinds'])\nexcept SystemExit:\n    pass")
    assert "jinja2" not in loaded


def test_service_init_subscribes_without_building_the_graphql_schema(tmp_path: Path) -> None:
    """`service init` writes the organisation and timebot's in-process webhook to the
    databases: it needs no resolver (building the schema was a third of the command)."""
    env = {**os.environ, "TIMEBOT_DATA_DIR": str(tmp_path / "data"), "TIMEBOT_SMTP_PORT": "0"}
    loaded = _modules_after(
        "from shell.cli import main\n"
        "try:\n    main(['service', 'init', '--org', 'Acme', '--admin-name', 'Ann',"
        " '--admin-email', 'ann@acme.example'])\nexcept SystemExit as end:\n"
        "    assert not end.code, end.code", env)
    assert not [name for name in loaded if name.endswith("_resolvers")]
    assert "service.graphql.schema" not in loaded


def test_a_bad_reminders_time_is_named_before_the_mail_is_imported(tmp_path: Path) -> None:
    env = {**os.environ, "TIMEBOT_DATA_DIR": str(tmp_path / "data")}
    loaded = _modules_after(
        "from shell.cli import main\n"
        "try:\n    main(['reminders', 'preview', '--org', 'x', '--at', 'monday'])\n"
        "except SystemExit as end:\n    assert end.code == 2, end.code", env)
    assert "mail.outbound.reminder_preview" not in loaded and "sqlalchemy" not in loaded


def test_a_command_calls_its_embedded_service_without_http(tmp_path: Path) -> None:
    """A command's GraphQL requests go to the embedded service's executor as calls, as the
    server's do (through an in-process HTTP app, a reminder run for 1,000 people spent a sixth
    of its CPU in the HTTP client and the ASGI app): no HTTP app is loaded for it."""
    env = {**os.environ, "TIMEBOT_DATA_DIR": str(tmp_path / "data"), "TIMEBOT_SMTP_PORT": "0"}
    created = subprocess.run(
        [sys.executable, "-c", "from shell.cli import main; main()", "service", "init", "--org",
         "Acme", "--admin-name", "Ann", "--admin-email", "ann@acme.example"],
        env=env, capture_output=True, text=True, timeout=300, check=True)
    organisation = json.loads(created.stdout)["organisation"]["id"]
    loaded = _modules_after(
        "from shell.cli import main\n"
        f"try:\n    main(['reminders', 'preview', '--org', '{organisation}'])\n"
        "except SystemExit as end:\n    assert not end.code, end.code", env)
    assert "service.graphql.schema" in loaded  # it did call the service
    assert "starlette.applications" not in loaded


def test_a_process_without_slack_or_teams_loads_neither_front(tmp_path: Path) -> None:
    """The chat fronts and their SDKs are a second of every start: only where configured;
    aiohttp (the GraphQL client's connections) only where the service is hosted."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("SLACK_", "TEAMS_"))}
    env.update(TIMEBOT_DATA_DIR=str(tmp_path / "data"), TIMEBOT_SMTP_PORT="0")
    build = ("from plumbing.clock import Clock\nfrom shell.app import create_app\n"
             "from timebot.config import load_settings\ncreate_app(load_settings(), Clock())")
    loaded = _modules_after(build, env)
    assert not [name for name in loaded if name.startswith(("bot.slack", "bot.teams"))]
    assert {name.split(".")[0] for name in loaded}.isdisjoint(
        {"slack_bolt", "slack_sdk", "microsoft_agents", "aiohttp"})
    with_slack = _modules_after(build, {**env, "SLACK_BOT_TOKEN": "xoxb-1",
                                        "SLACK_SIGNING_SECRET": "secret"})
    assert "bot.slack.component" in with_slack and "bot.teams.component" not in with_slack


@pytest.mark.parametrize("half", ["SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET"])
def test_half_of_the_slack_oauth_pair_is_still_refused(tmp_path: Path, half: str) -> None:
    """Either half alone asks for Slack (`Settings.slack_configured`): the front is loaded and
    names the missing half, rather than the process starting without Slack."""
    from plumbing.clock import Clock
    from shell.app import create_app
    from timebot.config import load_settings
    from timebot.errors import ConfigError

    settings = load_settings({"TIMEBOT_DATA_DIR": str(tmp_path / "data"),
                              "TIMEBOT_SMTP_PORT": "0", half: "x"})
    with pytest.raises(ConfigError, match="SLACK_CLIENT_ID and SLACK_CLIENT_SECRET go together"):
        create_app(settings, Clock())
