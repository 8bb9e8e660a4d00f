"""What `timebot backup` and `timebot restore` refuse, each with one line naming what was
wrong and exit status 1 (never a traceback), and leave as it was: a non-empty DIR, data dir
or database; a damaged, incomplete or missing backup; a schema newer than the code; a secret
key other than the backup's; pg_dump missing, a database unreachable; and a backup killed
half way leaves nothing that looks like a backup."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.pg import create_pg_database, drop_pg_database, pg_url
from tests.support import TEST_SECRET_KEY
from tests.timebot.test_cli import TIMEBOT, Run, cli_env, timebot

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow

OTHER_KEY = "another-9fK2mQ7vX4pL8sR1wN6bZ3yT5cH0dGjAxyz"


def _run(env: dict[str, str], *args: str) -> Run:
    done = subprocess.run([str(TIMEBOT), *args], env=env, capture_output=True, text=True,
                          timeout=120, cwd=Path(env["TIMEBOT_DATA_DIR"]).parent)
    return Run(done.returncode, done.stdout, done.stderr)


def refused(run: Run, *words: str) -> str:
    """The one-line error, asserted to name each of `words`."""
    assert run.code == 1, (run.out, run.err)
    assert "Traceback" not in run.err, run.err
    [line] = run.err.strip().splitlines()
    for word in words:
        assert word in line, line
    return line


def _source(root: Path, **settings: str) -> tuple[dict[str, str], Path]:
    """A data dir with an organisation (`timebot service init`) and its backup."""
    env = cli_env(root / "var", **settings)
    made = _run(env, "service", "init", "--org", "Acme", "--admin-name", "Ada",
                "--admin-email", "ada@acme.example")
    assert made.code == 0, made.err
    backed = _run(env, "backup", str(root / "backup"))
    assert backed.code == 0, backed.err
    return env, root / "backup"


@pytest.fixture(scope="module")
def sqlite_source(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], Path]:
    return _source(tmp_path_factory.mktemp("sqlite-source"))


@pytest.fixture(scope="module")
def pg_source(tmp_path_factory: pytest.TempPathFactory
              ) -> Iterator[tuple[dict[str, str], Path]]:
    names = [asyncio.run(create_pg_database()) for _ in range(2)]
    try:
        yield _source(tmp_path_factory.mktemp("pg-source"), TIMEBOT_SECRET_KEY=TEST_SECRET_KEY,
                      TIMEBOT_SERVICE_DATABASE_URL=pg_url(names[0]),
                      TIMEBOT_DATABASE_URL=pg_url(names[1]))
    finally:
        for name in names:
            asyncio.run(drop_pg_database(name))


def names_in(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir())


def flip_byte(path: Path, offset: int) -> None:
    with open(path, "r+b") as file:
        file.seek(offset)
        byte = file.read(1)
        file.seek(offset)
        file.write(bytes([byte[0] ^ 0xFF]))


def copy_of(backup: Path, into: Path) -> Path:
    shutil.copytree(backup, into / "copy")
    return into / "copy"


async def test_backup_refuses_a_directory_that_is_not_empty(
        sqlite_source: tuple[dict[str, str], Path], tmp_path: Path) -> None:
    env, backup = sqlite_source
    refused(await timebot(env, "backup", str(backup)), str(backup), "not empty")
    (tmp_path / "notes.txt").write_text("mine")
    refused(await timebot(env, "backup", str(tmp_path)), "not empty")
    assert names_in(tmp_path) == ["notes.txt"]
    inside = Path(env["TIMEBOT_DATA_DIR"]) / "backups"
    refused(await timebot(env, "backup", str(inside)), "inside TIMEBOT_DATA_DIR")


async def test_restore_refuses_a_data_dir_or_database_in_use(
        sqlite_source: tuple[dict[str, str], Path], tmp_path: Path) -> None:
    env, backup = sqlite_source
    refused(await timebot(env, "restore", str(backup)), "bot database", "not empty",
            "a restore never overwrites")
    target = tmp_path / "var"
    target.mkdir()
    (target / "notes.txt").write_text("mine")
    refused(await timebot(cli_env(target), "restore", str(backup)),
            "TIMEBOT_DATA_DIR", "notes.txt")
    assert names_in(target) == ["notes.txt", "secret.key"]


async def test_restore_refuses_a_damaged_incomplete_or_missing_backup(
        sqlite_source: tuple[dict[str, str], Path], tmp_path: Path) -> None:
    _, backup = sqlite_source
    env = cli_env(tmp_path / "var")
    damaged = copy_of(backup, tmp_path / "damaged")
    flip_byte(damaged / "service.sqlite3", 5000)
    refused(await timebot(env, "restore", str(damaged)), "damaged", "service.sqlite3")
    incomplete = copy_of(backup, tmp_path / "incomplete")
    (incomplete / "data" / "secret.key").unlink()
    refused(await timebot(env, "restore", str(incomplete)), "incomplete", "data/secret.key")
    (incomplete / "manifest.json").write_text('{"format": 1, "version": ')
    refused(await timebot(env, "restore", str(incomplete)), "manifest.json", "damaged")
    (incomplete / "manifest.json").unlink()
    refused(await timebot(env, "restore", str(incomplete)), "no manifest.json")
    refused(await timebot(env, "restore", str(tmp_path / "nowhere")), "does not exist")
    # Nothing was written: the data dir holds only the key `timebot` generated.
    assert names_in(tmp_path / "var") == ["secret.key"]


async def test_restore_refuses_a_schema_newer_than_the_code(
        sqlite_source: tuple[dict[str, str], Path], tmp_path: Path) -> None:
    _, backup = sqlite_source
    newer = copy_of(backup, tmp_path)
    manifest = json.loads((newer / "manifest.json").read_text())
    manifest["version"] = "9.0.0"
    manifest["databases"][1]["revision"] = "0099"
    (newer / "manifest.json").write_text(json.dumps(manifest))
    refused(await timebot(cli_env(tmp_path / "var"), "restore", str(newer)),
            "service database", "0099", "9.0.0", "does not know")


async def test_a_key_from_the_environment_stays_with_the_operator(
        pg_source: tuple[dict[str, str], Path], tmp_path: Path) -> None:
    """The PostgreSQL source runs with TIMEBOT_SECRET_KEY: its backup says the key is not in
    it, and a restore needs that key, no other."""
    env, backup = pg_source
    again = await timebot(env, "backup", str(tmp_path / "again"))
    assert again.code == 0 and "secret key is NOT in this backup" in again.err, again.err
    manifest = json.loads((backup / "manifest.json").read_text())
    assert manifest["secret_key_source"] == "environment"
    assert "data/secret.key" not in manifest["files"]
    names = [await create_pg_database() for _ in range(2)]
    try:
        target = cli_env(tmp_path / "var", TIMEBOT_SERVICE_DATABASE_URL=pg_url(names[0]),
                         TIMEBOT_DATABASE_URL=pg_url(names[1]))
        refused(await timebot(target, "restore", str(backup)), "TIMEBOT_SECRET_KEY",
                "does not hold the secret key")
        refused(await timebot({**target, "TIMEBOT_SECRET_KEY": OTHER_KEY}, "restore",
                              str(backup)), "TIMEBOT_SECRET_KEY is not the key")
        done = await timebot({**target, "TIMEBOT_SECRET_KEY": TEST_SECRET_KEY}, "restore",
                             str(backup))
        assert done.code == 0, done.err
        # Into databases now in use: refused, naming what is there.
        refused(await timebot({**target, "TIMEBOT_SECRET_KEY": TEST_SECRET_KEY,
                               "TIMEBOT_DATA_DIR": str(tmp_path / "var2")}, "restore",
                              str(backup)), "bot database", "not empty", "hosted_organisations")
    finally:
        for name in names:
            await drop_pg_database(name)


async def test_backup_without_pg_dump_or_database(
        pg_source: tuple[dict[str, str], Path], tmp_path: Path) -> None:
    env, _ = pg_source
    target = tmp_path / "backup"
    refused(await timebot({**env, "PATH": str(tmp_path)}, "backup", str(target)),
            "pg_dump is not installed")
    unreachable = {**env, "TIMEBOT_DATABASE_URL": "postgresql+asyncpg://postgres@127.0.0.1:1/x"}
    refused(await timebot(unreachable, "backup", str(target)), "cannot reach",
            "TIMEBOT_DATABASE_URL", "127.0.0.1:1/x")
    assert names_in(tmp_path) == []  # neither DIR nor a partial one


async def test_a_backup_killed_half_way_leaves_no_backup(
        pg_source: tuple[dict[str, str], Path], tmp_path: Path) -> None:
    """SIGKILL while pg_dump runs (a pg_dump that waits, after the real one's directory on
    PATH): no DIR, nothing a restore takes for a backup; the next backup to DIR works."""
    env, _ = pg_source
    tools = tmp_path / "bin"
    tools.mkdir()
    started = tmp_path / "pg_dump-started"
    (tools / "pg_dump").write_text(f"#!/bin/sh\ntouch {started}\nexec sleep 600\n")
    (tools / "pg_dump").chmod(0o755)
    target = tmp_path / "backup"
    process = await asyncio.create_subprocess_exec(
        str(TIMEBOT), "backup", str(target), env={**env, "PATH": f"{tools}:{env['PATH']}"},
        start_new_session=True, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL)
    try:
        for _ in range(600):
            if started.exists():
                break
            await asyncio.sleep(0.1)
        assert started.exists()
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
    assert not target.exists()
    refused(await timebot(cli_env(tmp_path / "var"), "restore", str(target)), "does not exist")
    done = await timebot(env, "backup", str(target))
    assert done.code == 0, done.err
    assert (target / "manifest.json").is_file()
