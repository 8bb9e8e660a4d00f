"""Gauges of the durable queues, read from the bot's database at each scrape of /metrics:
how many rows wait (queued, or held by a worker), how old the oldest of them is, how many
outbound messages keep failing ("stuck": retried while the failure lasts, for a person to look
at) and how many rows were set aside (failed: a relay's permanent refusal, a message or event
that failed for a reason of its own; `timebot outbox failed` lists the outbox's). The counter
of outbound messages that ended failed is counted where they end (every worker's, summed).

Under `--workers N` the worker answering a scrape reads them just before: the most recent value
of a live worker is the one reported (multiprocess_mode "livemostrecent"), once, not a sum."""

from __future__ import annotations

from typing import Any

from prometheus_client import Counter, Gauge
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from plumbing.clock import Clock
from timebot.state.models import InboxMessage, OutboxMessage, ReceivedEvent
from timebot.state.queue import FAILED, QUEUED, WORKING

STUCK_AFTER_ATTEMPTS = 6
"""An outbound message that failed this often (about half an hour of retries) is stuck."""

QUEUE_DEPTH = Gauge(
    "timebot_queue_depth", "Messages not yet delivered (outbox) or processed (inbox)", ["queue"],
    multiprocess_mode="livemostrecent")
QUEUE_OLDEST_AGE = Gauge(
    "timebot_queue_oldest_age_seconds",
    "Age of the oldest message not yet delivered (outbox) or processed (inbox); 0 when none",
    ["queue"], multiprocess_mode="livemostrecent")
OUTBOX_STUCK = Gauge(
    "timebot_outbox_stuck",
    f"Outbound messages still undelivered after {STUCK_AFTER_ATTEMPTS} attempts or more",
    multiprocess_mode="livemostrecent")

QUEUE_FAILED = Gauge(
    "timebot_queue_failed",
    "Rows set aside for good (outbox: refused permanently by the relay, or failing on their "
    "own; inbox, events: failing on their own)", ["queue"],
    multiprocess_mode="livemostrecent")
OUTBOX_FAILED_TOTAL = Counter(
    "timebot_outbox_failed",
    "Outbound messages that ended failed (a permanent refusal, or failing on their own)")

_WAITING = (QUEUED, WORKING)


async def _depth_and_oldest(session: AsyncSession, model: Any, since: Any) -> tuple[int, int]:
    count, oldest = (await session.execute(
        select(func.count(), func.min(since)).where(model.status.in_(_WAITING))
    )).one()
    return int(count or 0), int(oldest) if oldest is not None else 0


async def update_queue_gauges(sessions: async_sessionmaker[AsyncSession], clock: Clock) -> None:
    now = clock.now_ms()
    async with sessions() as session:
        for queue, model, since in (
            ("outbox", OutboxMessage, OutboxMessage.created_ms),
            ("inbox", InboxMessage, InboxMessage.received_ms),
        ):
            depth, oldest = await _depth_and_oldest(session, model, since)
            QUEUE_DEPTH.labels(queue).set(depth)
            QUEUE_OLDEST_AGE.labels(queue).set(max(0, now - oldest) / 1000 if depth else 0)
        stuck = await session.scalar(
            select(func.count()).select_from(OutboxMessage).where(
                OutboxMessage.status.in_(_WAITING),
                OutboxMessage.attempts >= STUCK_AFTER_ATTEMPTS,
            )
        )
        OUTBOX_STUCK.set(int(stuck or 0))
        failing: tuple[tuple[str, Any], ...] = (
            ("outbox", OutboxMessage), ("inbox", InboxMessage), ("events", ReceivedEvent))
        for queue, model in failing:
            failed = await session.scalar(
                select(func.count()).select_from(model).where(model.status == FAILED))
            QUEUE_FAILED.labels(queue).set(int(failed or 0))
