"""`timebot serve --workers 2` on SQLite (the scenario: tests/timebot/two_workers.py; on
PostgreSQL: test_workers_postgresql.py), and the values `--workers` takes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.timebot.test_cli import cli_env, timebot
from tests.timebot.two_workers import (
    databases,  # noqa: F401  (the fixture)
    share_the_mail_and_survive_kill_and_sigterm,
)

# A minute or more in one test: started first (tests/slow_first.py), not left for the end.
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("databases", ["sqlite"], indirect=True)
async def test_two_workers_share_the_mail_and_survive_kill_and_sigterm(
    tmp_path: Path, databases: dict[str, str]  # noqa: F811
) -> None:
    await share_the_mail_and_survive_kill_and_sigterm(tmp_path, databases)


async def test_workers_must_be_a_count_or_auto(tmp_path: Path) -> None:
    env = cli_env(tmp_path / "d")
    for value, said in (("0", "from 1 to 64"), ("two", "a whole number or auto"),
                        ("65", "from 1 to 64")):
        run = await timebot(env, "serve", "--workers", value)
        assert run.code == 2 and "Invalid value for '--workers'" in run.err and said in run.err, \
            run
