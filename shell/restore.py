"""`timebot restore DIR`: a backup put back into an empty data dir and empty databases. Every
check runs before anything is written: the checksums, schema revisions this code knows, the
secret key the restored timebot will run with, and that nothing is there to overwrite."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

from plumbing.schema_versions import SchemaTree
from shell.backup import DATA, SECRET_KEY_FILE
from shell.backup_databases import (
    Database,
    copy_into_place,
    databases_of,
    listed,
    pg_restore,
    same_database,
    sqlite_restore,
    tables_of,
)
from shell.backup_manifest import (
    BackupError,
    DatabaseEntry,
    Manifest,
    key_fingerprint,
    timebot_version,
)
from timebot.config import Settings


def _targets(settings: Settings, manifest: Manifest) -> list[tuple[DatabaseEntry, Database]]:
    configured = {database.name: database for database in databases_of(settings)}
    backed_up = {entry.name for entry in manifest.databases}
    if set(configured) != backed_up:
        raise BackupError(
            f"the backup holds the {' and '.join(sorted(backed_up))} database(s), these "
            f"settings run the {' and '.join(sorted(configured))} database(s) (the embedded "
            "service is restored only where TIMEBOT_SERVICE_URL is unset)")
    pairs = [(entry, configured[entry.name]) for entry in manifest.databases]
    for entry, database in pairs:
        if entry.kind != database.kind:
            raise BackupError(f"the backup's {entry.name} database is {entry.kind}, "
                              f"{database.variable} is {database.kind}: restore into the same "
                              "kind of database")
    for entry, database in pairs:
        for other, other_database in pairs:
            if (entry.file == other.file and entry.name != other.name
                    and not same_database(database, other_database)):
                raise BackupError(
                    f"the backup holds the {entry.name} and {other.name} databases in one "
                    f"PostgreSQL database: set {database.variable} and "
                    f"{other_database.variable} to one (empty) database")
    return pairs


def _tree(database: Database) -> SchemaTree:
    if database.name == "service":
        from service.db import schema_tree as service_tree

        return service_tree(database.url)
    from timebot.state.db import schema_tree as bot_tree

    return bot_tree()


def check_schema_known(pairs: list[tuple[DatabaseEntry, Database]], made_by: str) -> None:
    """A backup of an older schema is restored (the server upgrades it on start); one of a
    newer schema than this code knows is refused."""
    for entry, database in pairs:
        if entry.revision is not None and not _tree(database).known(entry.revision):
            raise BackupError(
                f"the backup's {entry.name} database is at schema revision {entry.revision} "
                f"(made by timebot {made_by}), which this timebot ({timebot_version()}) does "
                f"not know: restore it with timebot {made_by} or newer")


def _key_configured(settings: Settings) -> bool:
    """Whether TIMEBOT_SECRET_KEY (or the TOML file) gives the key, not the data dir."""
    path = settings.data_dir / SECRET_KEY_FILE
    return not (path.is_file() and path.read_text().strip() == settings.secret_key)


def check_secret_key(settings: Settings, manifest: Manifest, backup: Path) -> None:
    """The restored timebot must run with the key its tokens and reply addresses were sealed
    with: the backup's secret.key, or TIMEBOT_SECRET_KEY set to the key it was made with."""
    if _key_configured(settings):
        if key_fingerprint(settings.secret_key) != manifest.secret_key_fingerprint:
            raise BackupError(
                "TIMEBOT_SECRET_KEY is not the key the backup was made with: sealed tokens, "
                "reply addresses and stored keys would be unreadable. "
                + ("Unset it (the backup's secret.key is restored)"
                   if manifest.secret_key_source == "data_dir"
                   else "Set it to the key of the backed-up timebot"))
        return
    if manifest.secret_key_source != "data_dir":
        raise BackupError(
            "the backup does not hold the secret key (TIMEBOT_SECRET_KEY gave it when the "
            "backup was made): set TIMEBOT_SECRET_KEY to that key and restore again")
    if f"{DATA}/{SECRET_KEY_FILE}" not in manifest.files:
        raise BackupError(f"the backup is incomplete: {DATA}/{SECRET_KEY_FILE} is missing "
                          f"from {backup}")
    key = (backup / DATA / SECRET_KEY_FILE).read_text().strip()
    if key_fingerprint(key) != manifest.secret_key_fingerprint:
        raise BackupError(f"the backup is damaged: its {SECRET_KEY_FILE} is not the key it "
                          "was made with")


def _occupants(settings: Settings, databases: list[Database]) -> list[str]:
    """What the data dir holds besides the targets' empty SQLite files and a secret.key:
    the one `timebot` generates on its first run (this one, or a restore refused before);
    with the databases empty and nothing else there, it has sealed nothing yet."""
    root = settings.data_dir
    if not root.is_dir():
        return []
    allowed = {d.sqlite_path.resolve() for d in databases if d.kind == "sqlite"}
    allowed.add((root / SECRET_KEY_FILE).resolve())
    return sorted(path.name for path in root.iterdir() if path.resolve() not in allowed)


async def check_targets_empty(settings: Settings, databases: list[Database]) -> None:
    for database in databases:
        tables = await tables_of(database)
        if tables:
            raise BackupError(f"{database.label()} is not empty (it holds {listed(tables)}): "
                              "a restore never overwrites; give it an empty database")
    occupants = _occupants(settings, databases)
    if occupants:
        raise BackupError(f"TIMEBOT_DATA_DIR {settings.data_dir} is not empty (it holds "
                          f"{listed(occupants)}): restore into a new or empty data dir")


def _backup_files(backup: Path) -> Iterator[Path]:
    root = backup / DATA
    for folder, subfolders, files in os.walk(root):
        subfolders.sort()
        for name in [*sorted(subfolders), *sorted(files)]:
            yield (Path(folder) / name).relative_to(root)


def restore_files(backup: Path, data_dir: Path) -> None:
    """The data dir's files, each written beside its place and renamed into it."""
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    data_dir.chmod(0o700)
    for relative in _backup_files(backup):
        source, target = backup / DATA / relative, data_dir / relative
        if source.is_dir():
            target.mkdir(exist_ok=True, mode=0o700)
            continue
        copy_into_place(source, target)


async def restore_backup(settings: Settings, backup: Path) -> Manifest:
    manifest = Manifest.read(backup)
    await asyncio.to_thread(manifest.verify_files, backup)
    pairs = _targets(settings, manifest)
    check_schema_known(pairs, manifest.version)
    check_secret_key(settings, manifest, backup)
    await check_targets_empty(settings, [database for _, database in pairs])
    done: list[str] = []
    restored: list[tuple[str, Database]] = []
    try:
        for entry, database in pairs:
            if any(file == entry.file and same_database(d, database) for file, d in restored):
                continue  # one dump of a database the two share
            if database.kind == "sqlite":
                await asyncio.to_thread(sqlite_restore, backup / entry.file, database)
            else:
                await pg_restore(backup / entry.file, database)
            restored.append((entry.file, database))
            done.append(database.label())
        await asyncio.to_thread(restore_files, backup, settings.data_dir)
    except (BackupError, OSError) as error:
        if not done:
            raise
        raise BackupError(f"{error}; already restored: {', '.join(done)} (empty it before "
                          "restoring again)") from None
    return manifest
