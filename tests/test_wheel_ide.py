"""A plain `pip wheel .` (no make) of a fresh checkout carries the GraphQL IDE: setup.py's
build step builds service/static/graphiql with npm when it is missing; without npm the build
stops and says what to install. Built from a copy of the tracked files, as a clone has them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PIP = [sys.executable, "-m", "pip"]

pytestmark = pytest.mark.slow


def fresh_checkout(into: Path) -> Path:
    """The tracked files of this checkout (and the staged ones), nothing built."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached"], cwd=ROOT, check=True,
                            capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    assert not (into / "service" / "static" / "graphiql").exists()
    return into


def wheel(source: Path, out: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PIP, "wheel", ".", "--no-deps", "-w", str(out)], cwd=source,
                          env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm builds the IDE (Node.js 18+)")
def test_a_wheel_carries_the_ide(tmp_path: Path) -> None:
    source = fresh_checkout(tmp_path / "src")
    built = wheel(source, tmp_path / "dist", dict(os.environ))
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    [path] = (tmp_path / "dist").glob("timebot-*.whl")
    names = set(zipfile.ZipFile(path).namelist())
    for asset in ("index.html", "graphiql.js", "graphiql.css", "graphql.worker.js"):
        assert f"service/static/graphiql/{asset}" in names, sorted(names)[:50]


def test_without_npm_the_build_says_what_to_install(tmp_path: Path) -> None:
    source = fresh_checkout(tmp_path / "src")
    no_node = tmp_path / "bin"
    no_node.mkdir()
    env = {**os.environ, "PATH": str(no_node)}
    built = wheel(source, tmp_path / "dist", env)
    assert built.returncode != 0
    output = built.stdout + built.stderr
    assert "the GraphQL IDE could not be built" in output, output[-3000:]
    assert "install Node.js 18+ with npm" in output
