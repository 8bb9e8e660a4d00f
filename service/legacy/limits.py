"""Per-person daily limits of the legacy interface: 4000 requests and 2048 KB a UTC day.

Each request is counted before it runs (one request, plus the bytes of its body) and its
response bytes are added after it ran, each time with one atomic upsert keyed by
(person, UTC day): `INSERT ... ON CONFLICT DO UPDATE SET n = n + excluded.n RETURNING ...`.
The database does the arithmetic, so several processes sharing one PostgreSQL (or one
SQLite file) count together and never lose an increment.

A request is refused (HTTP 429) when, counting it, the person has made more than 4000
requests that day, or when the bytes transferred before it already reached 2048 KB (the
transfer that crosses the line completes; every later one that day is refused). Refused
requests are counted too. The window is the UTC day of the service clock.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncSession

from plumbing.db import insert_for
from service.legacy.errors import DailyLimitExceeded
from service.legacy.models import LegacyUsage

DAILY_REQUESTS = 4000
DAILY_BYTES = 2048 * 1024
DAY_MS = 86_400_000
# Counters older than this are deleted (by the first request of a person's day).
KEEP_DAYS = 31


@dataclass(frozen=True)
class Usage:
    requests: int
    bytes: int


def utc_day(now_ms: int) -> datetime.date:
    return datetime.datetime.fromtimestamp(now_ms / 1000, tz=datetime.UTC).date()


def next_utc_day_ms(now_ms: int) -> int:
    return (now_ms // DAY_MS + 1) * DAY_MS


async def add_usage(
    session: AsyncSession, org_id: str, person_id: str, now_ms: int, requests: int, size: int
) -> Usage:
    """Add to the person's counters of the day (atomically); the totals after the addition."""
    insert = insert_for(session)
    statement = insert(LegacyUsage).values(
        organisation_id=org_id,
        person_id=person_id,
        day=utc_day(now_ms),
        requests=requests,
        bytes=size,
    )
    statement = statement.on_conflict_do_update(
        index_elements=[LegacyUsage.person_id, LegacyUsage.day],
        set_={
            "requests": LegacyUsage.requests + statement.excluded.requests,
            "bytes": LegacyUsage.bytes + statement.excluded.bytes,
        },
    ).returning(LegacyUsage.requests, LegacyUsage.bytes)
    row = (await session.execute(statement)).one()
    return Usage(int(row[0]), int(row[1]))


async def prune_usage(session: AsyncSession, person_id: str, now_ms: int) -> None:
    """Forget the person's counters of days long past."""
    oldest = utc_day(now_ms) - datetime.timedelta(days=KEEP_DAYS)
    await session.execute(
        delete(LegacyUsage).where(LegacyUsage.person_id == person_id, LegacyUsage.day < oldest)
    )


def check_limits(usage: Usage, request_size: int, now_ms: int) -> None:
    """Refuse the request just counted in `usage` when it is past a daily limit."""
    reset_ms = next_utc_day_ms(now_ms)
    retry_after_s = max(1, -(-(reset_ms - now_ms) // 1000))
    reset = datetime.datetime.fromtimestamp(reset_ms / 1000, tz=datetime.UTC)
    until = reset.strftime("%Y-%m-%d %H:%M:%S UTC")
    if usage.requests > DAILY_REQUESTS:
        raise DailyLimitExceeded(
            f"Daily limit of {DAILY_REQUESTS} requests reached; try again after {until}",
            retry_after_s,
        )
    if usage.bytes - request_size >= DAILY_BYTES:
        raise DailyLimitExceeded(
            f"Daily transfer limit of {DAILY_BYTES // 1024} KB reached; try again after {until}",
            retry_after_s,
        )
