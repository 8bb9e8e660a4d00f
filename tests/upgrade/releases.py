"""The releases upgrades are tested from, and their code as it was released: each is taken
from this repository's history (`git archive` of its commit) into a folder of its own, and
run with that folder first on PYTHONPATH (the venv's libraries are the same)."""

from __future__ import annotations

import compileall
import os
import subprocess
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]

# Every release an upgrade is supported from, with the commit it was made at. A new release
# adds its line here and its fixture (tests/upgrade/fixtures/<version>, make_fixture.py).
RELEASES = {
    "1.0.0": "8f614bb0f3ba2d899b12ed394495da103727ca4f",
}

_CACHE = Path(tempfile.gettempdir()) / "timebot-releases"


def release_tree(version: str) -> Path:
    """The release's packages, extracted once per machine; skips the test (with the reason)
    in a clone without the release's commit (a shallow one)."""
    commit = RELEASES[version]
    target = _CACHE / f"{version}-{commit}"
    if (target / "shell" / "cli.py").is_file():
        return target
    try:
        archive = subprocess.run(
            ["git", "-C", str(REPOSITORY), "archive", "--format=tar", commit,
             "shell", "timebot", "service", "bot", "mail", "web", "plumbing"],
            check=True, capture_output=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        pytest.skip(f"release {version} ({commit}) is not in this clone's history: {error}")
    staging = Path(tempfile.mkdtemp(prefix=f"{version}-", dir=_ensure(_CACHE)))
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(staging, filter="data")
    compileall.compile_dir(staging, quiet=2)  # once, not in every process started
    try:
        staging.rename(target)
    except OSError:  # another worker extracted it first
        pass
    return target


def _ensure(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def release_env(version: str, env: dict[str, str]) -> dict[str, str]:
    """`env` for running the release's code: its packages before the installed ones."""
    tree = release_tree(version)
    return {**env, "PYTHONPATH": os.pathsep.join(
        [str(tree), *filter(None, [env.get("PYTHONPATH")])])}
