"""The period, in one place: weeks from Monday 00:00 to the next Monday, in UTC (the embedded
service's auto-submit weeks, as the bot shows them) or in a person's own time zone (the
end-of-period reminders); when a period ends in someone's time zone, which of its days are
working days, and the key that makes a period's reminder go out once."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

DAY_MS = 86_400_000
WEEK_MS = 7 * DAY_MS
# A reminder is due from the period's end until this long after (a process that was down
# catches up).
REMINDER_GRACE_MS = 2 * DAY_MS
WORKING_DAYS = 5  # Monday to Friday


@dataclass(frozen=True)
class Period:
    start_ms: int
    end_ms: int


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


def last_ended_week(now_ms: int, time_zone: str) -> Period:
    """Pure: the latest local week (Monday 00:00 to Monday 00:00) that has ended by now."""
    zone = ZoneInfo(time_zone)
    local = datetime.fromtimestamp(now_ms / 1000, UTC).astimezone(zone)
    monday = (local - timedelta(days=local.weekday())).date()
    end = datetime(monday.year, monday.month, monday.day, tzinfo=zone)
    start_day = monday - timedelta(days=7)
    start = datetime(start_day.year, start_day.month, start_day.day, tzinfo=zone)
    return Period(int(start.timestamp() * 1000), int(end.timestamp() * 1000))


def reminder_due(now_ms: int, period: Period) -> bool:
    """Pure: the period has ended, not longer ago than the grace."""
    return period.end_ms <= now_ms < period.end_ms + REMINDER_GRACE_MS


def absent_whole_period(
    records: list[tuple[date, bool]], period: Period, time_zone: str,
    working: set[date] | None = None,
) -> bool:
    """Pure: `records` = (local day, is absence). Absent on every working day (`working`, by
    default Monday to Friday) and nothing but absences."""
    zone = ZoneInfo(time_zone)
    absent_days = set()
    for day, is_absence in records:
        if not is_absence:
            return False
        absent_days.add(day)
    if working is None:
        first = datetime.fromtimestamp(period.start_ms / 1000, UTC).astimezone(zone).date()
        working = {first + timedelta(days=offset) for offset in range(WORKING_DAYS)}
    return working <= absent_days


def working_days(days: list[dict[str, Any]], time_zone: str) -> dict[date, bool]:
    """Pure: {local day: working} from GraphQL scheduledDays."""
    zone = ZoneInfo(time_zone)
    return {
        datetime.fromtimestamp(int(day["date"]["ts"]) / 1000, UTC).astimezone(zone).date():
            bool(day["workingDay"])
        for day in days
    }


def weekdays(start_ms: int, end_ms: int, time_zone: str) -> dict[date, bool]:
    """Pure: {local day: Monday to Friday} from start to end (inclusive), for a service that
    knows no schedules."""
    zone = ZoneInfo(time_zone)
    first = datetime.fromtimestamp(start_ms / 1000, UTC).astimezone(zone).date()
    last = datetime.fromtimestamp(end_ms / 1000, UTC).astimezone(zone).date()
    days = {}
    while first <= last:
        days[first] = first.weekday() < WORKING_DAYS
        first += timedelta(days=1)
    return days


def period_dedupe_key(organisation_id: str, person_id: str, period: Period) -> str:
    """The key of one person's reminder of one period, the same on every channel."""
    return f"period-reminder:{organisation_id}:{person_id}:{period.start_ms}"
