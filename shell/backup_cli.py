"""`timebot backup DIR` and `timebot restore DIR` (shell/backup.py, shell/restore.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from shell.backup_manifest import BackupError
from timebot.config import Settings

KEY_WARNING = (
    "warning: the secret key is NOT in this backup (TIMEBOT_SECRET_KEY gives it): keep that "
    "key with the backup. Without it every sealed token, reply address and stored API key "
    "in the backup is unreadable."
)
DIRECTORY = click.Path(path_type=Path, file_okay=False)


@click.command()
@click.argument("directory", type=DIRECTORY)
@click.pass_obj
def backup(settings: Settings, directory: Path) -> None:
    """Copy both databases, the secret key and the data dir into the new DIRECTORY,
    consistently, while timebot runs."""
    from shell.backup import make_backup

    try:
        made = asyncio.run(make_backup(settings, directory))
    except BackupError as error:
        raise click.ClickException(str(error)) from None
    for entry in made.manifest.databases:
        click.echo(f"{entry.name} database ({entry.kind}, schema {entry.revision}): "
                   f"{entry.file}")
    click.echo(f"{len(made.manifest.files)} files, timebot {made.manifest.version}: "
               f"{made.directory}")
    if made.manifest.secret_key_source != "data_dir":
        click.echo(KEY_WARNING, err=True)


@click.command()
@click.argument("directory", type=DIRECTORY)
@click.pass_obj
def restore(settings: Settings, directory: Path) -> None:
    """Put the backup in DIRECTORY back into an empty data dir and empty databases."""
    from shell.restore import restore_backup

    try:
        manifest = asyncio.run(restore_backup(settings, directory))
    except BackupError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"restored the backup of {manifest.created_at} (timebot {manifest.version}) "
               f"into {settings.data_dir}: start timebot serve (it upgrades the schema when "
               "it is newer)")
