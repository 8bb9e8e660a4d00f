"""`timebot reminders preview|send`: the operator sees and drives the schedule of one
organisation (the scheduler's own decisions, in this process, against the configured service).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import click

from plumbing.clock import Clock
from timebot.config import Settings

T = TypeVar("T")


def parse_at(text: str | None) -> int | None:
    """Pure: --at as Unix ms (ISO 8601; without an offset it is UTC)."""
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as error:
        raise click.BadParameter(
            f"{text!r} is not an ISO 8601 time (e.g. 2026-11-30T09:00 or 2026-11-30T09:00+01:00)",
            param_hint="--at",
        ) from error
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


async def _with_mail(settings: Settings, clock: Clock, organisation_id: str,
                     work: Callable[[Any, Any], Awaitable[T]]) -> T:
    """Runs `work(mail context, notification jobs)` in a runtime of this process that starts
    no workers and no schedule of its own."""
    from mail.review_component import install_reviews
    from shell.build import build_runtime
    from timebot.process.notifications import install_notifications

    built = build_runtime(settings, clock, in_process=True)
    runtime = built.runtime
    runtime.auto_subscribe = False
    jobs = install_notifications(runtime)
    component = install_reviews(runtime, built.mail, [], jobs)
    try:
        await runtime.start(background=False)
        if organisation_id not in await runtime.directory.organisation_ids():
            raise click.ClickException(f"--org {organisation_id}: no such organisation served")
        return await work(component.ctx, jobs)
    finally:
        await runtime.stop()


@click.group()
def reminders() -> None:
    """See and send the reminders, digests and scheduled reports of an organisation."""


@reminders.command("preview")
@click.option("--org", "org_id", required=True, help="The organisation's id.")
@click.option("--at", "at_text", default=None, metavar="TIME",
              help="Preview as at this ISO 8601 time (default: now; no offset means UTC).")
@click.pass_obj
def preview_command(settings: Settings, org_id: str, at_text: str | None) -> None:
    """List the period reminders, digests, approval reminders and saved reports that would go
    out (to whom, when) and, for everyone else, why not. Changes nothing."""
    clock = Clock(frozen_ms=parse_at(at_text))  # a bad --at is named before any import
    from mail.outbound.reminder_preview import preview

    async def work(ctx: Any, _jobs: Any) -> Any:
        return await preview(ctx, org_id)

    lines = asyncio.run(_with_mail(settings, clock, org_id, work))
    click.echo(f"as at {datetime.fromtimestamp(clock.now_ms() / 1000, UTC):%Y-%m-%d %H:%M} UTC")
    if not lines:
        click.echo("nothing: nobody in the organisation gets reminders, digests or reports")
    for line in lines:
        click.echo(line.render().rstrip())


@reminders.command("send")
@click.option("--org", "org_id", required=True, help="The organisation's id.")
@click.option("--at", "at_text", default=None, metavar="TIME",
              help="Send what was due at this earlier ISO 8601 time (a run that was missed); "
              "default: now.")
@click.pass_obj
def send_command(settings: Settings, org_id: str, at_text: str | None) -> None:
    """Queue the period reminders, digests and saved reports due now, each once (a running
    timebot sends nothing twice), and hand them to the relay or the outbox. Approval
    reminders go when the service announces them."""
    at_ms = parse_at(at_text)
    clock = Clock(frozen_ms=at_ms)
    if at_ms is not None and at_ms > Clock().now_ms():
        raise click.BadParameter("is in the future: only what is due now or was due may be sent",
                                 param_hint="--at")
    from mail.outbound.reminder_preview import send_due

    async def queue_then_deliver(ctx: Any, jobs: Any) -> Any:
        queued = await send_due(ctx, jobs.scheduler, org_id)
        # What is due is decided as at --at; the mail is handed over now, on the real clock:
        # its leases must hold against a running timebot's worker (leases taken as at a past
        # --at looked expired to it, and it sent the same mail too).
        clock.frozen_ms = None
        try:
            for _ in range(1000):  # bounded: a relay that fails reschedules, which ends it
                if not await ctx.mail.outbox_worker.run_once():
                    break
        finally:
            await ctx.mail.outbox_worker.stop()  # the relay's sessions ended (QUIT)
        return queued

    queued, reports = asyncio.run(_with_mail(settings, clock, org_id, queue_then_deliver))
    click.echo(f"queued {queued} reminder(s) and digest(s), {reports} report mail(s)")
