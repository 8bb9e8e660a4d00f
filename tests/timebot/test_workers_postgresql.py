"""`timebot serve --workers 2` on PostgreSQL (the scenario: tests/timebot/two_workers.py): a
file of its own, so that another worker of the suite runs it beside the SQLite one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.timebot.two_workers import (
    databases,  # noqa: F401  (the fixture)
    share_the_mail_and_survive_kill_and_sigterm,
)

# A minute or more in one test: started first (tests/slow_first.py), not left for the end.
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("databases", ["postgresql"], indirect=True)
async def test_two_workers_share_the_mail_and_survive_kill_and_sigterm(
    tmp_path: Path, databases: dict[str, str]  # noqa: F811
) -> None:
    await share_the_mail_and_survive_kill_and_sigterm(tmp_path, databases)
