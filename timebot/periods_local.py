"""A timesheet period as its owner reads it: calendar dates in the owner's time zone.

Periods are stored as UTC instants (start inclusive, end exclusive); a Berlin week of 16-22
November starts at 2026-11-15T23:00Z, so its dates must be taken in Europe/Berlin, not UTC.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["local_period", "period_dates"]


def _zone(name: str | None) -> ZoneInfo:
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def period_dates(start_ms: int, end_ms: int, time_zone: str | None) -> tuple[date, date]:
    """(first day, last day) of the period in `time_zone` (an unknown zone reads as UTC)."""
    zone = _zone(time_zone)
    first = datetime.fromtimestamp(start_ms / 1000, UTC).astimezone(zone).date()
    last = datetime.fromtimestamp(max(start_ms, end_ms - 1) / 1000, UTC).astimezone(zone).date()
    return first, last


def local_period(start_ms: int, end_ms: int, time_zone: str | None) -> str:
    """`2026-11-16 to 2026-11-22` in `time_zone`."""
    first, last = period_dates(start_ms, end_ms, time_zone)
    return f"{first.isoformat()} to {last.isoformat()}"
