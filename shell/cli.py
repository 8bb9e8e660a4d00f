"""The `timebot` command."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import click

from plumbing.clock import SYSTEM_CLOCK
from plumbing.errors import SchemaNewerThanCode
from plumbing.release import VERSION
from shell.backup_cli import backup, restore
from shell.cli_slack import slack
from shell.orgs_cli import orgs
from shell.outbox_cli import outbox
from shell.people_cli import people
from shell.reminders_cli import reminders
from shell.service_import import service_import
from shell.templates_cli import templates
from timebot.config import Settings, check_role, load_settings
from timebot.errors import ConfigError

T = TypeVar("T")


def _run(coroutine_factory: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(coroutine_factory())  # type: ignore[arg-type]


def _print_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False))


async def _with_service_session(settings: Settings, work: Callable[[Any], Awaitable[T]]) -> T:
    from plumbing.db import unit_of_work
    from shell.embedded_db import embedded_sessions

    async with embedded_sessions(settings) as sessions, unit_of_work(sessions) as session:
        return await work(session)


class _Command(click.Group):
    """The `timebot` group: a database that a newer release migrated is refused with the
    message that names both releases, as any other error the user can act on (no traceback)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except SchemaNewerThanCode as error:
            raise click.ClickException(str(error)) from error


@click.group(cls=_Command, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(VERSION, message="%(prog)s %(version)s")
@click.pass_context
def main(context: click.Context) -> None:
    """timebot: timesheets from Slack and e-mail, with an embedded time tracking service.

    Configuration comes from TIMEBOT_* and SLACK_* environment variables (or timebot.toml);
    see README.md.
    """
    try:
        context.obj = load_settings()
    except ConfigError as error:  # a clear message and exit status 1, not a traceback
        raise click.ClickException(str(error)) from error
    try:  # a fresh data dir (the secret key given in the environment creates none)
        context.obj.data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise click.ClickException(
            f"TIMEBOT_DATA_DIR {context.obj.data_dir} cannot be created: {error.strerror}"
        ) from error


@main.command()
@click.option("--demo", is_flag=True, help="Seed the demo organisation on first start.")
@click.option(
    "--role",
    type=click.Choice(["all", "service", "fronts"]),
    default=None,
    help="What this process runs (default TIMEBOT_ROLE, else all): service = the embedded "
    "service alone; fronts = mail, Slack, links and the scheduler against TIMEBOT_SERVICE_URL.",
)
@click.option(
    "--workers", "workers_text", default="1", show_default=True, metavar="N|auto",
    help="Worker processes sharing the listening sockets and the databases (auto: one per "
    "core); jobs that must run once run in one worker at a time.",
)
@click.pass_obj
def serve(settings: Settings, demo: bool, role: str | None, workers_text: str) -> None:
    """Run everything configured: the HTTP app, mail listeners, IMAP poller, scheduler."""
    import dataclasses

    import uvicorn

    from shell.supervisor import (
        DrainFirstServer,
        migrate_all,
        parse_workers,
        stop_signals_exit_0,
        supervise,
    )

    try:
        workers = parse_workers(workers_text)
    except ConfigError as error:
        raise click.BadParameter(str(error).removeprefix("--workers "),
                                 param_hint="'--workers'") from error
    if role is not None:
        try:
            check_role(role, settings.service_url)
        except ConfigError as error:
            raise click.ClickException(str(error)) from error
        settings = dataclasses.replace(settings, role=role)

    from shell.app import create_app
    from timebot.telemetry.logs import configure_logging

    configure_logging(settings.log_level)
    # Both schemas current (or refused, naming both releases) before anything starts.
    _run(lambda: migrate_all(settings))
    if demo:
        if not settings.embedded:
            raise click.ClickException(
                "--demo seeds the embedded service; unset TIMEBOT_SERVICE_URL"
            )
        summary = _run(lambda: _with_service_session(settings, _seed_demo))
        _print_demo_banner(settings, summary)
        settings = dataclasses.replace(settings, demo=True)
        from shell.demo_slack import start_for_demo

        settings, lines = start_for_demo(settings, workers)  # #27: a second organisation
        from shell.demo_teams_page import start_teams_for_demo

        settings, teams_lines = start_teams_for_demo(settings, workers, summary)  # #42
        for line in lines + teams_lines:
            click.echo(line)
    elif settings.runs_service and not _run(lambda: _with_service_session(settings, _any_org)):
        click.echo(NO_ORGANISATION_HINT)
    if workers > 1:
        try:
            sys.exit(supervise(settings, workers))
        except ConfigError as error:
            raise click.ClickException(str(error)) from error
    stop_signals_exit_0()  # as a worker of the supervisor: SIGTERM drains, then exits 0
    app = create_app(settings)
    # log_config=None: uvicorn's loggers go through configure_logging's one format. SIGTERM
    # first drains the mail in hand, then stops HTTP (DrainFirstServer).
    server = DrainFirstServer(uvicorn.Config(
        app, host=settings.http_host, port=settings.http_port,
        log_level=settings.log_level.lower(), log_config=None, timeout_graceful_shutdown=5,
        server_header=False,  # no `server: uvicorn` naming the software
    ), app.state.runtime)
    server.run()
    if not server.started:
        sys.exit(3)  # as uvicorn.run: the app did not start


NO_ORGANISATION_HINT = (
    "No organisation yet: run `timebot service init --org … --admin-name … --admin-email …` "
    "or `timebot serve --demo`"
)


async def _any_org(session: Any) -> bool:
    from sqlalchemy import select

    from service.models import Organisation

    return (await session.scalars(select(Organisation.id).limit(1))).first() is not None


async def _seed_demo(session: Any) -> dict[str, Any]:
    from service.demo import seed_demo
    from service.demo.export import export_demo

    await seed_demo(session, SYSTEM_CLOCK.now_ms())
    return await export_demo(session)


def _print_demo_banner(settings: Settings, summary: dict[str, Any]) -> None:
    base = settings.public_url
    click.echo(f"timebot demo: {summary['organisation']['name']}")
    click.echo(f"  GraphQL IDE:   {base}/graphql   (set the header apikey: <key>)")
    click.echo(f"  Legacy API:    {base}/api/v2")
    click.echo(f"  Outbox:        {base}/outbox")
    click.echo(f"  Health:        {base}/healthz")
    click.echo("  People and their keys:")
    for person in summary["persons"]:
        click.echo(f"    {person['role']:<9} {person['email']:<28} apikey {person['apikey']}")
    click.echo("  Try: curl -s -H 'apikey: <key>' -H 'content-type: application/json' "
               f"-d '{{\"query\":\"{{currentPerson{{name}}}}\"}}' {base}/graphql")
    click.echo("  The approval loop by e-mail, step by step: README.md, "
               "\"Trying the whole loop locally\"")


@main.group()
def demo() -> None:
    """The demo organisation."""


@demo.command("export")
@click.pass_obj
def demo_export(settings: Settings) -> None:
    """Print the demo organisation of the data dir as JSON (seeding it if needed)."""
    _print_json(_run(lambda: _with_service_session(settings, _seed_demo)))


@main.group()
def service() -> None:
    """Manage the embedded time tracking service."""


@service.command("init")
@click.option("--org", "org_name", required=True, help="Name of the new organisation.")
@click.option("--admin-name", required=True, help="Full name of its first administrator.")
@click.option(
    "--admin-email", required=True,
    help="E-mail address of its first administrator (who signs in and gets review mail).",
)
@click.pass_obj
def service_init(settings: Settings, org_name: str, admin_name: str, admin_email: str) -> None:
    """Create an empty organisation with its administrator; print their ids and keys."""
    from service.organisation.provisioning import create_organisation

    async def work(session: Any) -> dict[str, Any]:
        created = await create_organisation(
            session, org_name, admin_name, admin_email, SYSTEM_CLOCK.now_ms()
        )
        admin: dict[str, Any] = {
            "id": created.admin.id,
            "email": created.admin.email,
            "apikey": created.apikey,
        }
        admin["legacyToken"] = await _legacy_token(session, created.admin)
        return {"organisation": {"id": created.organisation.id}, "admin": admin}

    result = _run(lambda: _with_service_session(settings, work))
    if settings.runs_fronts:  # a service-only data dir has no fronts to subscribe
        _run(lambda: _subscribe(settings, str(result["organisation"]["id"])))
    _print_json(result)


async def _subscribe(settings: Settings, organisation_id: str) -> None:
    """Register timebot's webhook on a new organisation at once, so that a server running
    beside this command serves its first submission (its own loop would find the
    organisation only later). A failure is only reported: that loop subscribes it, and its
    reconciler sends what was submitted meanwhile."""
    from shell.build import build_runtime
    from timebot.telemetry.logs import configure_logging

    configure_logging("WARNING")  # stdout carries the JSON answer alone
    runtime = build_runtime(settings, SYSTEM_CLOCK, in_process=True).runtime
    try:
        await runtime.start(background=False)
        await runtime.subscriptions.ensure(organisation_id)
    except Exception as error:
        click.echo(f"warning: timebot did not subscribe to the organisation yet: {error}",
                   err=True)
    finally:
        await runtime.stop()


async def _legacy_token(session: Any, person: Any) -> str | None:
    try:
        from service.legacy.tokens import ensure_legacy_token
    except ImportError:
        return None
    return await ensure_legacy_token(session, person, SYSTEM_CLOCK.now_ms())


@service.command("apikey")
@click.option("--email", required=True, help="The person's e-mail address in the service.")
@click.option("--org", "org_id", default=None, help="Organisation id, when EMAIL is in several.")
@click.option("--reset", is_flag=True, help="Revoke the current key and issue a new one.")
@click.pass_obj
def service_apikey(settings: Settings, email: str, org_id: str | None, reset: bool) -> None:
    """Print the person's GraphQL API key."""
    from service.organisation.provisioning import ensure_api_key, persons_by_email, reset_api_key

    async def work(session: Any) -> str:
        persons = await persons_by_email(session, email, org_id)
        if not persons:
            raise click.ClickException(f"no person with e-mail {email}")
        if len(persons) > 1:
            orgs = ", ".join(p.organisation_id for p in persons)
            raise click.ClickException(f"{email} is in several organisations ({orgs}); pass --org")
        now = SYSTEM_CLOCK.now_ms()
        if reset:
            return await reset_api_key(session, persons[0], now)
        return await ensure_api_key(session, persons[0], now)

    click.echo(_run(lambda: _with_service_session(settings, work)))


service.add_command(service_import)


@service.command("legacy-token")
@click.option("--email", required=True, help="The person's e-mail address in the service.")
@click.option("--org", "org_id", default=None, help="Organisation id, when EMAIL is in several.")
@click.option("--reset", is_flag=True, help="Revoke the current token and issue a new one.")
@click.pass_obj
def service_legacy_token(settings: Settings, email: str, org_id: str | None, reset: bool) -> None:
    """Print the person's legacy interface token (POST /api/v2, basic auth TOKEN:x)."""
    from service.legacy.tokens import ensure_legacy_token, reset_legacy_token
    from service.organisation.provisioning import persons_by_email

    async def work(session: Any) -> str:
        persons = await persons_by_email(session, email, org_id)
        if not persons:
            raise click.ClickException(f"no person with e-mail {email}")
        if len(persons) > 1:
            orgs = ", ".join(p.organisation_id for p in persons)
            raise click.ClickException(f"{email} is in several organisations ({orgs}); pass --org")
        now = SYSTEM_CLOCK.now_ms()
        if reset:
            return await reset_legacy_token(session, persons[0], now)
        return await ensure_legacy_token(session, persons[0], now)

    click.echo(_run(lambda: _with_service_session(settings, work)))


@service.command("subscription")
@click.option("--org", "org_id", required=True, help="Organisation id.")
@click.option(
    "--inactive/--active",
    "inactive",
    default=None,
    help="--inactive: API-key requests answer HTTP 402 AccountIsInactive; --active: served again.",
)
@click.pass_obj
def service_subscription(settings: Settings, org_id: str, inactive: bool | None) -> None:
    """Mark the organisation's subscription inactive or active."""
    if inactive is None:
        raise click.UsageError("say which: --inactive or --active")
    from service.organisation.account_life import AccountLifeError, set_subscription

    async def work(session: Any) -> None:
        try:
            await set_subscription(session, org_id, active=not inactive)
        except AccountLifeError as error:
            raise click.ClickException(str(error)) from error

    _run(lambda: _with_service_session(settings, work))
    click.echo(f"organisation {org_id}: subscription {'inactive' if inactive else 'active'}")


@service.command("purge")
@click.option("--org", "org_id", required=True, help="Organisation id.")
@click.pass_obj
def service_purge(settings: Settings, org_id: str) -> None:
    """Permanently delete, now, an organisation scheduled for deletion (ends its grace period
    early). Refuses one that is not scheduled."""
    from service.organisation.account_life import AccountLifeError, purge_organisation

    async def work(session: Any) -> None:
        try:
            await purge_organisation(session, org_id, SYSTEM_CLOCK.now_ms())
        except AccountLifeError as error:
            raise click.ClickException(str(error)) from error

    _run(lambda: _with_service_session(settings, work))
    click.echo(f"organisation {org_id}: deleted permanently")


main.add_command(people)  # timebot people link|list (shell/people_cli.py)
main.add_command(outbox)  # timebot outbox status|failed (shell/outbox_cli.py)
main.add_command(reminders)  # timebot reminders preview|send (shell/reminders_cli.py)
main.add_command(slack)  # timebot slack status (shell/cli_slack.py)
main.add_command(templates)  # timebot templates kinds|preview (shell/templates_cli.py)
main.add_command(orgs)  # timebot orgs add|list|remove (shell/orgs_cli.py)
main.add_command(backup)  # timebot backup DIR (shell/backup_cli.py)
main.add_command(restore)  # timebot restore DIR (shell/backup_cli.py)

if __name__ == "__main__":
    sys.exit(main())
