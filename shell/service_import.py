"""`timebot service import`: people from a CSV file into an organisation of the embedded
service (the operator's way to set up a large organisation: addPerson's rate limit, which
keeps an administrator from mailing strangers by the hundred, does not apply; nothing is
mailed). Reading and planning are `service.people.csv_import*`; this is the command around them."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from plumbing.clock import SYSTEM_CLOCK
from timebot.config import Settings

HELP = """Add or update the people of the organisation --org from a CSV FILE ('-': standard input).

\b
The header row names the columns, in any order:
  name      the person's full name (required)
  e-mail    their address, how they sign in (required; one row per address)
  role      a role of the organisation, by name or kind (admin, manager,
            employee); empty: the employee role
  manager   their manager's e-mail (a person of the file or the organisation)
  tags      tag names separated by ';' or '|' (missing tags are created)

\b
The file is the truth about the people it lists: a changed name, role, manager or
tags is updated (a person's other managers and tags are removed); people it does
not list are left alone. Running it again changes nothing. A row that cannot be
imported is reported (row number, column, why) and the others are imported; the
exit status is then 1. Writes go in short transactions, so a running `timebot
serve` keeps answering; an import stopped half way is finished by running it
again. No mail is sent: people sign in with their e-mail address (or ask for
their API key with `timebot service apikey`).
"""


@click.command("import", help=HELP)
@click.option("--org", "org_id", required=True, help="The organisation's id.")
@click.option("--dry-run", is_flag=True, help="List what would change; write nothing.")
@click.option("--batch-size", default=200, show_default=True, type=click.IntRange(1, 10_000),
              help="Rows written per transaction.")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
@click.pass_obj
def service_import(
    settings: Settings, org_id: str, dry_run: bool, batch_size: int, file: Path
) -> None:
    from service.people.csv_import import ImportFileError, parse

    text = _read(file)
    try:
        rows, refused = parse(text)
    except ImportFileError as error:
        raise click.ClickException(str(error)) from error
    refusals = asyncio.run(_import(settings, org_id, rows, refused, dry_run, batch_size))
    if refusals:
        sys.exit(1)


def _read(file: Path) -> str:
    try:
        data = sys.stdin.buffer.read() if str(file) == "-" else file.read_bytes()
    except OSError as error:
        raise click.ClickException(f"cannot read {file}: {error.strerror}") from error
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise click.ClickException(
            f"{file} is not UTF-8 (byte {error.start}): save it as CSV UTF-8"
        ) from error


async def _import(
    settings: Settings, org_id: str, rows: Any, refused: Any, dry_run: bool, batch_size: int
) -> int:
    from plumbing.db import unit_of_work
    from service.errors import ServiceError
    from service.people.import_plan import plan
    from service.people.import_store import apply, load_existing, steps
    from shell.embedded_db import embedded_sessions

    async with embedded_sessions(settings) as sessions:
        try:
            async with unit_of_work(sessions) as session:
                planned = plan(rows, await load_existing(session, org_id), refused)
        except ServiceError as error:
            raise click.ClickException(str(error)) from error
        for refusal in planned.refusals:
            click.echo(f"refused: {refusal}", err=True)
        counts = planned.counts
        if dry_run:
            for line in _listing(planned):
                click.echo(line)
            click.echo(f"dry run, nothing written: would add {counts['added']}, update "
                       f"{counts['updated']}, leave {counts['unchanged']} unchanged; "
                       f"refused {counts['refused']}")
            return len(planned.refusals)
        skipped = 0
        if not planned.writes:
            click.echo(f"nothing to change: the {counts['unchanged']} people of the file are "
                       "up to date")
        else:
            with _progress(steps(planned)) as progress:
                outcome = await apply(sessions, org_id, planned, SYSTEM_CLOCK.now_ms,
                                      batch_size, progress)
            skipped = len(outcome.skipped)
            for email in outcome.skipped:
                click.echo(f"skipped: {email} was added by someone else during the import; "
                           "run the import again to compare", err=True)
        click.echo(f"added {counts['added'] - skipped}, updated {counts['updated']}, "
                   f"unchanged {counts['unchanged']}, refused {counts['refused']}")
        return len(planned.refusals)


def _listing(planned: Any) -> list[str]:
    lines = []
    for change in planned.changes:
        row = change.row
        if change.kind == "add":
            details = [change.role.name]
            if row.manager:
                details.append(f"manager {row.manager}")
            if row.tags:
                details.append("tags " + ", ".join(row.tags))
            lines.append(f"would add {row.email} ({row.name}; {'; '.join(details)})")
        elif change.kind == "update":
            what = []
            for name in change.fields:
                what.append({"name": f"name -> {row.name}", "role": f"role -> {change.role.name}",
                             "manager": f"manager -> {row.manager or 'none'}",
                             "tags": "tags -> " + (", ".join(row.tags) or "none")}[name])
            lines.append(f"would update {row.email} (row {row.line}): {'; '.join(what)}")
    for name in planned.new_tags:
        lines.append(f"would create the tag {name}")
    return lines


class _progress:
    """A progress bar on a terminal, else a plain line per batch."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.bar: Any = None
        self.done = 0

    def __enter__(self) -> Callable[[int], None]:
        if sys.stdout.isatty():
            self.bar = click.progressbar(length=self.total, label="importing").__enter__()
        return self.update

    def update(self, done: int) -> None:
        if self.bar is not None:
            self.bar.update(done - self.done)
        else:
            click.echo(f"written {done}/{self.total}")
        self.done = done

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)
