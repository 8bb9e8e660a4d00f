"""Timesheet periods as the bot uses them: weeks from Monday 00:00 UTC to the next Monday
(the embedded service's auto-submit weeks), and when a period ends in someone's time zone."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

DAY_MS = 86_400_000
WEEK_MS = 7 * DAY_MS


def week_of(ms: int) -> tuple[int, int]:
    """(start, end) in ms of the Monday-to-Monday UTC week holding `ms`."""
    day = datetime.fromtimestamp(ms / 1000, UTC).date()
    monday = day - timedelta(days=day.weekday())
    start = int(datetime(monday.year, monday.month, monday.day, tzinfo=UTC).timestamp() * 1000)
    return start, start + WEEK_MS


def previous_week(ms: int) -> tuple[int, int]:
    start, _ = week_of(ms)
    return start - WEEK_MS, start


def zone(name: str | None) -> ZoneInfo:
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def local_date(ms: int, tz: str | None) -> date:
    return datetime.fromtimestamp(ms / 1000, zone(tz)).date()


def local_hour(ms: int, tz: str | None) -> int:
    return datetime.fromtimestamp(ms / 1000, zone(tz)).hour


def days_of(start_ms: int, end_ms: int) -> list[date]:
    first = datetime.fromtimestamp(start_ms / 1000, UTC).date()
    count = max(0, (end_ms - start_ms) // DAY_MS)
    return [first + timedelta(days=i) for i in range(count)]
