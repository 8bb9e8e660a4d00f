"""A backup's manifest.json: what it holds (databases with their schema revisions, files with
their sha256), which timebot made it, and how its secret key is kept; checked before a
restore writes anything."""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from plumbing.release import VERSION

MANIFEST = "manifest.json"
FORMAT = 1
CHUNK = 1 << 20


class BackupError(Exception):
    """A backup or restore refused or failed; the message says what and where."""


def timebot_version() -> str:
    return VERSION


def key_fingerprint(secret_key: str) -> str:
    """Names a secret key without revealing it (HMAC of a constant under the key): a restore
    compares the key it will run with against the backup's."""
    return hmac.new(secret_key.encode(), b"timebot backup key", hashlib.sha256).hexdigest()[:16]


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while chunk := file.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass(frozen=True)
class DatabaseEntry:
    name: str  # "bot" or "service"
    kind: str  # "sqlite" or "postgresql"
    file: str  # under DIR; two PostgreSQL entries share one dump when they share a database
    revision: str | None  # alembic revision; None: an empty schema


@dataclass(frozen=True)
class Manifest:
    version: str
    created_at: str
    # "data_dir": secret.key is in the backup; "environment": TIMEBOT_SECRET_KEY (or the
    # TOML file) gave the key, and the operator keeps it.
    secret_key_source: str
    secret_key_fingerprint: str
    databases: tuple[DatabaseEntry, ...]
    files: dict[str, str] = field(default_factory=dict)  # path under DIR -> sha256
    format: int = FORMAT

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True) + "\n"

    @classmethod
    def read(cls, directory: Path) -> Manifest:
        path = directory / MANIFEST
        if not directory.exists():
            raise BackupError(f"{directory} does not exist")
        if not directory.is_dir():
            raise BackupError(f"{directory} is not a directory")
        if not path.is_file():
            raise BackupError(f"{directory} holds no {MANIFEST}: not a timebot backup, or an "
                              "incomplete one")
        try:
            raw: dict[str, Any] = json.loads(path.read_text())
            if raw.get("format") != FORMAT:
                raise BackupError(f"{path}: format {raw.get('format')!r}, this timebot reads "
                                  f"format {FORMAT}")
            return cls(
                version=str(raw["version"]),
                created_at=str(raw["created_at"]),
                secret_key_source=str(raw["secret_key_source"]),
                secret_key_fingerprint=str(raw["secret_key_fingerprint"]),
                databases=tuple(DatabaseEntry(**entry) for entry in raw["databases"]),
                files={str(name): str(digest) for name, digest in raw["files"].items()},
            )
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise BackupError(f"{path} is damaged: {error!r}") from None

    def verify_files(self, directory: Path) -> None:
        """Every listed file present with its checksum, and nothing listed outside DIR."""
        root = directory.resolve()
        for name, digest in sorted(self.files.items()):
            path = (directory / name).resolve()
            if not path.is_relative_to(root) or path == root:
                raise BackupError(f"{directory / MANIFEST} lists {name!r}, outside the backup")
            if not path.is_file():
                raise BackupError(f"the backup is incomplete: {name} is missing from {directory}")
            if sha256_of(path) != digest:
                raise BackupError(f"the backup is damaged: {name}'s checksum differs from "
                                  f"{MANIFEST}'s")
        for entry in self.databases:
            if entry.file not in self.files:
                raise BackupError(f"{MANIFEST} names {entry.file} for the {entry.name} database "
                                  "but lists no checksum for it")
