"""`timebot people link` / `people list` through the real command, on the embedded service."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import TEST_SECRET_KEY

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow

TIMEBOT = str(Path(sys.executable).with_name("timebot"))


def run(data_dir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TIMEBOT_DATA_DIR": str(data_dir), "TIMEBOT_SECRET_KEY": TEST_SECRET_KEY}
    result = subprocess.run(
        [TIMEBOT, *args], env=env, capture_output=True, text=True, timeout=120
    )
    if check and result.returncode != 0:
        raise AssertionError(f"timebot {' '.join(args)} failed: {result.stderr}")
    return result


@pytest.fixture(scope="module")
def initialised(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    data_dir = tmp_path_factory.mktemp("people-cli")
    created = json.loads(
        run(data_dir, "service", "init", "--org", "Globex", "--admin-name", "Gina Admin",
            "--admin-email", "gina@globex.example").stdout
    )
    return data_dir, created["admin"]


def test_link_checks_the_key_and_never_lists_it(initialised: tuple[Path, dict[str, str]]) -> None:
    data_dir, admin = initialised
    linked = run(data_dir, "people", "link", "--email", admin["email"], "--apikey", admin["apikey"])
    assert "linked gina@globex.example" in linked.stdout
    listing = run(data_dir, "people", "list").stdout
    assert "gina@globex.example" in listing and "linked" in listing
    assert admin["apikey"] not in listing
    stored = (data_dir / "bot.db").read_bytes()
    assert admin["apikey"].encode() not in stored, "keys are stored encrypted"


def test_link_refuses_a_wrong_key_or_someone_elses(
    initialised: tuple[Path, dict[str, str]],
) -> None:
    data_dir, admin = initialised
    wrong = run(data_dir, "people", "link", "--email", admin["email"], "--apikey", "nope",
                check=False)
    assert wrong.returncode != 0 and "InvalidKey" in wrong.stderr
    other = run(data_dir, "people", "link", "--email", "someone@globex.example", "--apikey",
                admin["apikey"], check=False)
    assert other.returncode != 0 and "belongs to gina@globex.example" in other.stderr
