"""Gauges of the durable mail queues, read from the bot's database at each scrape of /metrics:
how many rows wait (queued, or held by a worker), how old the oldest of them is, and how many
outbound messages keep failing ("stuck": retried for ever, for a person to look at).

Under `--workers N` the worker answering a scrape reads them just before: the most recent value
of a live worker is the one reported (multiprocess_mode "livemostrecent"), once, not a sum."""

from __future__ import annotations

from typing import Any

from prometheus_client import Gauge
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from plumbing.clock import Clock
from timebot.state.models import InboxMessage, OutboxMessage
from timebot.state.queue import QUEUED, WORKING

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
