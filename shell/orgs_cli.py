"""`timebot orgs add|list|remove`: the organisations of a hosted service this timebot serves,
each with its own integration key (#27)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import click

from plumbing.clock import SYSTEM_CLOCK
from timebot.config import Settings

T = TypeVar("T")


def _hosted_only(settings: Settings) -> None:
    if settings.embedded:
        raise click.ClickException(
            "timebot orgs registers organisations of a hosted service: set "
            "TIMEBOT_SERVICE_URL (the embedded service's organisations are all served)")


async def _with_runtime(settings: Settings, work: Callable[[Any], Awaitable[T]]) -> T:
    from shell.build import build_runtime

    runtime = build_runtime(settings, SYSTEM_CLOCK, in_process=True).runtime
    try:
        await runtime.start(background=False)
        return await work(runtime)
    finally:
        await runtime.stop()


def _run(settings: Settings, work: Callable[[Any], Awaitable[T]]) -> T:
    from timebot.errors import TimebotError

    _hosted_only(settings)
    try:
        return asyncio.run(_with_runtime(settings, work))
    except TimebotError as error:
        raise click.ClickException(str(error)) from error


@click.group()
def orgs() -> None:
    """The organisations of the hosted service this timebot serves."""


@orgs.command("add")
@click.option("--integration-key", required=True, envvar="TIMEBOT_ORG_INTEGRATION_KEY",
              help="An administrator's key of the organisation (or TIMEBOT_ORG_INTEGRATION_KEY).")
@click.pass_obj
def orgs_add(settings: Settings, integration_key: str) -> None:
    """Serve the key's organisation: the key is checked with currentOrganisation, stored
    encrypted, and timebot's webhook is registered on the organisation at once."""

    async def work(runtime: Any) -> tuple[Any, str | None]:
        added = await runtime.directory.organisations.add(integration_key)
        try:
            await runtime.subscriptions.ensure(added.organisation_id, refresh=True)
        except Exception as error:  # the server's own loop subscribes it later
            return added, str(error)
        return added, None

    added, warning = _run(settings, work)
    if warning is not None:
        click.echo(f"warning: the webhook is not registered yet: {warning}", err=True)
    click.echo(f"serving organisation {added.organisation_id} ({added.name})")


@orgs.command("list")
@click.pass_obj
def orgs_list(settings: Settings) -> None:
    """The organisations registered here (never their keys), and whether timebot's webhook is
    registered on each."""

    async def work(runtime: Any) -> list[str]:
        subscribed = {row.organisation_id for row in await runtime.subscriptions.registrations()}
        return [f"{served.organisation_id}  {served.name}  " + (
                    "webhook registered" if served.organisation_id in subscribed
                    else "no webhook yet")
                for served in await runtime.directory.organisations.served()]

    lines = _run(settings, work)
    if settings.integration_key:
        lines.append("TIMEBOT_INTEGRATION_KEY serves its own organisation beside these")
    for line in lines or ["no organisation registered (timebot orgs add --integration-key …)"]:
        click.echo(line)


@orgs.command("remove")
@click.option("--org", "org_id", required=True, help="The organisation's id (timebot orgs list).")
@click.pass_obj
def orgs_remove(settings: Settings, org_id: str) -> None:
    """Stop serving the organisation: its webhook is deleted on the service (while its key
    still works) and its key forgotten."""

    async def work(runtime: Any) -> bool:
        organisations = runtime.directory.organisations
        if await organisations.key_for(org_id) is None:
            return False
        await runtime.subscriptions.unsubscribe(org_id)
        return bool(await organisations.remove(org_id))

    if not _run(settings, work):
        raise click.ClickException(f"organisation {org_id} is not registered here")
    click.echo(f"organisation {org_id}: no longer served")
