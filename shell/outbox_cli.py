"""`timebot outbox status` and `timebot outbox failed`: what the outbound mail queue holds, and
the messages that ended failed (a relay's permanent refusal, or a message failing on its own)
with their recipients, subject and reason, for the operator. Read from the bot's database."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import click

from timebot.config import Settings


async def _read(settings: Settings, failed_limit: int | None) -> tuple[dict[str, int], list[Any]]:
    from sqlalchemy import func, select

    from timebot.state.db import create_engine, migrate, session_factory
    from timebot.state.models import OutboxMessage
    from timebot.state.queue import FAILED

    engine = create_engine(settings.database_url)
    try:
        await migrate(engine)
        async with session_factory(engine)() as session:
            counts = {status: int(count) for status, count in (await session.execute(
                select(OutboxMessage.status, func.count()).group_by(OutboxMessage.status)
            )).all()}
            failed: list[Any] = []
            if failed_limit is not None:
                failed = list(await session.scalars(
                    select(OutboxMessage).where(OutboxMessage.status == FAILED)
                    .order_by(OutboxMessage.next_attempt_ms.desc(), OutboxMessage.id)
                    .limit(failed_limit)))
            return counts, failed
    finally:
        await engine.dispose()


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())


@click.group()
def outbox() -> None:
    """The outbound mail queue."""


@outbox.command("status")
@click.pass_obj
def outbox_status(settings: Settings) -> None:
    """How many messages wait, were sent, or ended failed."""
    counts, _ = asyncio.run(_read(settings, None))
    for status in ("queued", "working", "done", "failed"):
        click.echo(f"{status:8} {counts.get(status, 0)}")


@outbox.command("failed")
@click.option("--limit", default=100, show_default=True, help="At most this many, newest first.")
@click.pass_obj
def outbox_failed(settings: Settings, limit: int) -> None:
    """The messages that ended failed: when, to whom, the subject and the reason (the relay's
    answer to a permanent refusal). They are not retried; send them again by other means."""
    _, failed = asyncio.run(_read(settings, limit))
    if not failed:
        click.echo("no failed messages")
        return
    for row in failed:
        click.echo(f"{_when(row.next_attempt_ms)}  {row.id}  {row.kind}")
        click.echo(f"  to:      {', '.join(str(r) for r in row.rcpt_tos or [])}")
        click.echo(f"  subject: {_one_line(row.subject)}")
        click.echo(f"  reason:  {_one_line(row.last_error)}")
