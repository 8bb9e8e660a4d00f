"""The `timebot` command starts cheaply: the suite and operators start it hundreds of times, and
each start used to import SQLAlchemy and Jinja before any subcommand was chosen. A subcommand
imports what it needs when it runs."""

from __future__ import annotations

import json
import subprocess
import sys

# Libraries no subcommand needs just to be chosen or to print its help.
HEAVY = ("sqlalchemy", "jinja2", "alembic", "graphql", "ariadne", "service")


def _loaded_after(code: str) -> set[str]:
    listing = subprocess.run(
        [sys.executable, "-c", f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"],
        capture_output=True, text=True, check=True, timeout=60)
    return {name.split(".")[0] for name in json.loads(listing.stdout.splitlines()[-1])}


def test_importing_the_command_loads_no_database_template_or_service_library() -> None:
    assert _loaded_after("from shell.cli import main").isdisjoint(HEAVY)


def test_the_templates_command_names_its_kinds_without_jinja() -> None:
    loaded = _loaded_after(
        "from shell.cli import main\n"
        "try:\n    main(['templates', 'kinds'])\nexcept SystemExit:\n    pass")
    assert "jinja2" not in loaded
