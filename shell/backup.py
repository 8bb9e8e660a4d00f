"""`timebot backup DIR`: a consistent copy of what a timebot needs to resume, taken while it
runs. The bot's database first (its queues: outbound mail, the inbox, Slack's outgoing), then
the service's, then the data dir's files (secret.key, the outbox Maildir, template overrides):
a mail delivered to the Maildir after the bot's snapshot is found there by the restored
outbox worker and not written twice; a submission the service took after it, the bot's
reconciler finds on start. DIR appears only complete: everything is written into a sibling
directory renamed to DIR at the end."""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from shell.backup_databases import (
    Database,
    databases_of,
    pg_dump,
    pg_revision,
    same_database,
    sqlite_copy,
    sqlite_snapshot,
)
from shell.backup_manifest import (
    MANIFEST,
    BackupError,
    DatabaseEntry,
    Manifest,
    key_fingerprint,
    sha256_of,
    timebot_version,
)
from timebot.config import Settings

DATA = "data"  # the data dir's files, under DIR
SECRET_KEY_FILE = "secret.key"
# Under the data dir, not part of what a server resumes from: the worker processes' metrics
# (shell/supervisor.py) and Maildir's tmp/ (messages still being written).
TRANSIENT = ("worker-metrics", "outbox/tmp")
SUFFIX = {"sqlite": "sqlite3", "postgresql": "pgdump"}


@dataclass(frozen=True)
class Made:
    directory: Path
    manifest: Manifest


def secret_key_in_data_dir(settings: Settings) -> bool:
    """Whether the key in force is the data dir's secret.key (not TIMEBOT_SECRET_KEY's)."""
    path = settings.data_dir / SECRET_KEY_FILE
    return path.is_file() and path.read_text().strip() == settings.secret_key


def database_files(settings: Settings) -> set[Path]:
    """The SQLite files of the configured databases with their journals: copied through the
    backup API, never as files."""
    found: set[Path] = set()
    for database in databases_of(settings):
        if database.kind == "sqlite":
            path = database.sqlite_path.resolve()
            found |= {path, *(Path(f"{path}{s}") for s in ("-wal", "-shm", "-journal"))}
    return found


def data_files(settings: Settings) -> Iterator[Path]:
    """The data dir's files to carry, relative to it."""
    root = settings.data_dir.resolve()
    skipped = database_files(settings)
    transient = {root / name for name in TRANSIENT}
    for folder, subfolders, files in os.walk(root):
        here = Path(folder)
        subfolders[:] = sorted(name for name in subfolders if here / name not in transient)
        for name in sorted(files):
            path = here / name
            if path not in skipped and path.is_file():
                yield path.relative_to(root)


def _check_destination(settings: Settings, directory: Path) -> None:
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise BackupError(f"{directory} exists and is not empty: give a new or empty "
                          "directory (a backup never overwrites one)")
    if directory.resolve().is_relative_to(settings.data_dir.resolve()):
        raise BackupError(f"{directory} is inside TIMEBOT_DATA_DIR ({settings.data_dir}): "
                          "the backup would copy itself; choose a directory outside it")


async def _databases(settings: Settings, into: Path) -> list[DatabaseEntry]:
    """Each database copied as of (nearly) one moment: the SQLite snapshots are begun before
    any copy, and the pg_dumps (each one snapshot of its database) start together."""
    databases = databases_of(settings)
    files: dict[str, str] = {}
    dumps: list[Database] = []
    for database in databases:
        shared = [other for other in dumps if same_database(other, database)]
        files[database.name] = (f"{shared[0].name}.pgdump" if shared
                                else f"{database.name}.{SUFFIX[database.kind]}")
        if database.kind == "postgresql" and not shared:
            dumps.append(database)
    before = {d.name: await pg_revision(d) for d in databases if d.kind == "postgresql"}
    snapshots: dict[str, sqlite3.Connection] = {}
    try:
        for database in databases:
            if database.kind == "sqlite":
                snapshots[database.name] = await asyncio.to_thread(sqlite_snapshot, database)
        copies = [asyncio.to_thread(sqlite_copy, d, snapshots[d.name], into / files[d.name])
                  for d in databases if d.kind == "sqlite"]
        results = await asyncio.gather(
            *copies, *(pg_dump(d, into / files[d.name]) for d in dumps))
    finally:
        for snapshot in snapshots.values():
            snapshot.close()
    copied = dict(zip(snapshots, results[:len(snapshots)], strict=True))
    for database in databases:
        if database.kind == "postgresql" and await pg_revision(database) != before[
                database.name]:
            raise BackupError(f"{database.label()} was migrated during the backup (a new "
                              "version started): run the backup again")
    return [DatabaseEntry(d.name, d.kind, files[d.name], copied.get(d.name, before.get(d.name)))
            for d in databases]


def _copy_data_files(settings: Settings, into: Path) -> None:
    for relative in data_files(settings):
        target = into / DATA / relative
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            shutil.copyfile(settings.data_dir / relative, target)
        except FileNotFoundError:  # gone meanwhile (a Maildir reader moved new/ to cur/)
            continue
    for folder in ("tmp", "new", "cur"):  # the Maildir whole, even where a folder was empty
        if (settings.outbox_dir / folder).is_dir():
            (into / DATA / "outbox" / folder).mkdir(parents=True, exist_ok=True, mode=0o700)


def _seal(into: Path) -> dict[str, str]:
    """Modes 0600/0700, each file on disk (fsync), and its sha256 by its path under DIR."""
    files: dict[str, str] = {}
    for folder, _, names in os.walk(into):
        Path(folder).chmod(0o700)
        for name in names:
            path = Path(folder) / name
            path.chmod(0o600)
            with open(path, "rb") as file:
                os.fsync(file.fileno())
            files[path.relative_to(into).as_posix()] = sha256_of(path)
    return files


def _write_manifest(into: Path, manifest: Manifest) -> None:
    path = into / MANIFEST
    with open(path, "x") as file:
        file.write(manifest.to_json())
        file.flush()
        os.fsync(file.fileno())
    path.chmod(0o600)


def _partial_beside(settings: Settings, directory: Path) -> Path:
    """The directory the backup is written into, beside DIR (on its file system)."""
    _check_destination(settings, directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    partial = directory.with_name(f".{directory.name}.partial-{uuid.uuid4().hex[:8]}")
    partial.mkdir(mode=0o700)
    return partial


def _publish(partial: Path, directory: Path) -> None:
    os.rename(partial, directory)  # onto an empty DIR too; atomic
    directory.chmod(0o700)
    descriptor = os.open(directory.parent, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


async def make_backup(settings: Settings, directory: Path) -> Made:
    directory = directory.absolute()  # noqa: ASYNC240 (no I/O: the working directory)
    partial = _partial_beside(settings, directory)
    try:
        entries = await _databases(settings, partial)
        await asyncio.to_thread(_copy_data_files, settings, partial)
        files = await asyncio.to_thread(_seal, partial)
        in_data_dir = secret_key_in_data_dir(settings)
        manifest = Manifest(
            version=timebot_version(),
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
            secret_key_source="data_dir" if in_data_dir else "environment",
            secret_key_fingerprint=key_fingerprint(settings.secret_key),
            databases=tuple(entries),
            files=files,
        )
        _write_manifest(partial, manifest)
        _publish(partial, directory)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return Made(directory, manifest)
