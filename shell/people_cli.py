"""`timebot people link|list`: who timebot may act for, and with which key."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import click

from plumbing.clock import SYSTEM_CLOCK
from timebot.config import Settings

T = TypeVar("T")


def _run(coroutine_factory: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(coroutine_factory())  # type: ignore[arg-type]


@click.group()
def people() -> None:
    """Who timebot may act for, and with which key."""


async def _with_directory(settings: Settings, work: Callable[[Any], Awaitable[T]]) -> T:
    from shell.build import build_runtime

    runtime = build_runtime(settings, SYSTEM_CLOCK, in_process=True).runtime
    try:
        await runtime.start(background=False)
        return await work(runtime.directory)
    finally:
        await runtime.stop()


@people.command("link")
@click.option("--email", required=True, help="The person's e-mail address in the service.")
@click.option("--apikey", required=True, help="The person's own GraphQL API key.")
@click.pass_obj
def people_link(settings: Settings, email: str, apikey: str) -> None:
    """Link a person's own API key (checked with currentPerson, stored encrypted)."""
    from timebot.errors import TimebotError

    async def work(directory: Any) -> Any:
        return await directory.link(email, apikey)

    try:
        entry = _run(lambda: _with_directory(settings, work))
    except TimebotError as error:
        raise click.ClickException(str(error)) from error
    click.echo(f"linked {entry.email} ({entry.name}) of organisation {entry.organisation_id}")


@people.command("list")
@click.pass_obj
def people_list(settings: Settings) -> None:
    """Show every person of the organisations timebot serves and how timebot acts for them
    (their own linked key, a provisioned one, or none yet) and their Slack identity; never
    the keys."""
    from timebot.directory.listing import people_rows, render

    async def work(directory: Any) -> Any:
        return await people_rows(
            directory, directory.client, embedded=settings.embedded,
            own_address=settings.mail_from,
        )

    rows, warnings = _run(lambda: _with_directory(settings, work))
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    if not rows:
        click.echo("nobody yet: no organisation has people, and nobody is linked")
        return
    for line in render(rows):
        click.echo(line.rstrip())
