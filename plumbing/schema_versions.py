"""Where a database's schema stands against this code's migrations, and the refusal to run on
a schema that a newer release wrote.

Each tree of migrations (the service's, the bot's) has its version table (Alembic's) and, from
release 1.1 on, a table of the releases that migrated it: `(revision, version)`, a row written
by each release that brought the database to a new revision. An older release that finds a
revision it does not know reads that table to name the release that wrote it; a database
without the table was written by a release that did not keep it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import BigInteger, Column, MetaData, String, Table, inspect, text

from plumbing.clock import SYSTEM_CLOCK
from plumbing.errors import SchemaNewerThanCode
from plumbing.release import VERSION

Position = Literal["current", "behind", "ahead"]


@dataclass(frozen=True)
class SchemaTree:
    """One tree of migrations: its name in messages, Alembic's config, its version table and
    its table of releases."""

    name: str
    config: Any
    version_table: str
    releases_table: str

    def heads(self) -> set[str]:
        from alembic.script import ScriptDirectory

        return set(ScriptDirectory.from_config(self.config).get_heads())

    def known(self, revision: str) -> bool:
        """Whether `revision` is one of the tree's (exactly: not Alembic's prefix match)."""
        from alembic.script import ScriptDirectory

        scripts = ScriptDirectory.from_config(self.config).walk_revisions()
        return revision in {script.revision for script in scripts}


def releases_table(metadata: MetaData, name: str) -> Table:
    """The table of the releases that migrated a tree, in the tree's metadata (its models)."""
    return Table(
        name, metadata,
        Column("revision", String(32), primary_key=True),
        Column("version", String(32), nullable=False),
        Column("migrated_at_ms", BigInteger, nullable=False),
    )


def record_release(connection: Any, tree: SchemaTree) -> None:
    """After an upgrade: this release, beside each head revision it is the first to bring the
    database to (in the upgrade's transaction, under its lock)."""
    if not inspect(connection).has_table(tree.releases_table):
        return
    known = set(connection.execute(text(f"SELECT revision FROM {tree.releases_table}")).scalars())
    for revision in sorted(applied(connection, tree) - known):
        connection.execute(
            text(f"INSERT INTO {tree.releases_table} (revision, version, migrated_at_ms) "
                 "VALUES (:revision, :version, :at)"),
            {"revision": revision, "version": VERSION, "at": SYSTEM_CLOCK.now_ms()},
        )


def applied(connection: Any, tree: SchemaTree) -> set[str]:
    """The revisions the database is at (a sync connection)."""
    from alembic.runtime.migration import MigrationContext

    context = MigrationContext.configure(connection, opts={"version_table": tree.version_table})
    return set(context.get_current_heads())


def position(connection: Any, tree: SchemaTree) -> Position:
    """"ahead" when the database is at a revision this code does not know (a newer release
    migrated it), "current" at this code's heads, "behind" otherwise (not yet migrated)."""
    revisions = applied(connection, tree)
    if any(not tree.known(revision) for revision in revisions):
        return "ahead"
    return "current" if revisions == tree.heads() else "behind"


def release_of(connection: Any, tree: SchemaTree, revisions: set[str]) -> str | None:
    """The release recorded as having migrated the database to `revisions`, if the table of
    releases exists and says."""
    if not inspect(connection).has_table(tree.releases_table):
        return None
    query = text(f"SELECT version FROM {tree.releases_table} WHERE revision = :revision")
    for revision in sorted(revisions):
        version = connection.execute(query, {"revision": revision}).scalar()
        if version is not None:
            return str(version)
    return None


def refuse_if_newer(connection: Any, tree: SchemaTree) -> None:
    """Raises SchemaNewerThanCode, naming both releases, when a newer release migrated the
    database; reads only."""
    revisions = applied(connection, tree)
    unknown = {revision for revision in revisions if not tree.known(revision)}
    if not unknown:
        return
    writer = release_of(connection, tree, unknown)
    written_by = f"timebot {writer}" if writer else f"a timebot newer than {VERSION}"
    run = f"timebot {writer} or later" if writer else "a newer timebot"
    raise SchemaNewerThanCode(
        f"the {tree.name} database is at schema revision {', '.join(sorted(unknown))}, written "
        f"by {written_by}; this is timebot {VERSION}, whose {tree.name} schema goes up to "
        f"revision {', '.join(sorted(tree.heads()))}. Run {run}, or restore a backup made by "
        f"timebot {VERSION} into empty databases; nothing was changed"
    )
