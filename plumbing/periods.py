"""Timesheet periods as pure functions: the period of the setting `periodicity` that holds a
day or a moment, in the person's time zone and from their first day of the week.

- daily: the day; weekly: seven days from the person's `firstDayOfWeek` (0 Sunday … 6
  Saturday); monthly: the calendar month; semiMonthly: the 1st to the 15th, the 16th to
  the month's end.
- biWeekly: fourteen days from the first day of the week, the fortnights counted from the
  week that starts on that weekday between Sunday 4 and Saturday 10 January 1970 (for
  Monday starts, Monday 5 January 1970; so a Monday-start fortnight starts on Monday
  2026-11-09 and on Monday 2026-11-23). A fixed anchor, rather than the ISO week's parity,
  keeps the fortnights regular across years of 53 weeks.

A period is (first day, day after its last): start inclusive, end exclusive; in ms, the local
midnights of those days. An end given as a day's last millisecond (23:59:59.999, as some
clients name a period's end) means the midnight after it (`exclusive_end`). The service (its
submit and entry rules) and the fronts ("this period", reminders, digests) both use these
functions, so both show the same period.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

PERIODICITIES = ("daily", "weekly", "biWeekly", "semiMonthly", "monthly")
DEFAULT_PERIODICITY = "weekly"
DEFAULT_FIRST_DAY = 1  # Monday
# Sunday 4 January 1970: the biWeekly fortnights are counted from the week it begins.
BIWEEKLY_ANCHOR = date(1970, 1, 4)
# The period as the fronts name it: "this week", "the last fortnight" …
NOUNS = {"daily": "day", "weekly": "week", "biWeekly": "fortnight",
         "semiMonthly": "half-month", "monthly": "month"}


def zone_of(name: str | None) -> ZoneInfo:
    """The named zone; UTC for none or a name no longer known."""
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def known(periodicity: object) -> str:
    """The periodicity, or the default for a value no setting can hold."""
    return periodicity if isinstance(periodicity, str) and periodicity in PERIODICITIES \
        else DEFAULT_PERIODICITY


def _first_day(first_day_of_week: object) -> int:
    ok = isinstance(first_day_of_week, int) and not isinstance(first_day_of_week, bool)
    return first_day_of_week % 7 if ok else DEFAULT_FIRST_DAY  # type: ignore[operator]


def _next_month(day: date) -> date:
    return date(day.year + day.month // 12, day.month % 12 + 1, 1)


def period_of(periodicity: str, day: date, first_day_of_week: int = DEFAULT_FIRST_DAY
              ) -> tuple[date, date]:
    """(first day, day after the last) of the period holding `day`."""
    kind = known(periodicity)
    first = _first_day(first_day_of_week)
    if kind == "daily":
        return day, day + timedelta(days=1)
    if kind == "monthly":
        start = day.replace(day=1)
        return start, _next_month(start)
    if kind == "semiMonthly":
        if day.day <= 15:
            return day.replace(day=1), day.replace(day=16)
        return day.replace(day=16), _next_month(day)
    if kind == "weekly":
        start = day - timedelta(days=((day.weekday() + 1) % 7 - first) % 7)
        return start, start + timedelta(days=7)
    anchor = BIWEEKLY_ANCHOR + timedelta(days=first)
    start = anchor + timedelta(days=(day - anchor).days // 14 * 14)
    return start, start + timedelta(days=14)


def local_midnight_ms(day: date, zone: ZoneInfo) -> int:
    return int(datetime(day.year, day.month, day.day, tzinfo=zone).timestamp() * 1000)


def local_day(ms: int, zone: ZoneInfo) -> date:
    return datetime.fromtimestamp(ms / 1000, UTC).astimezone(zone).date()


def period_at(periodicity: str, moment_ms: int, zone: ZoneInfo,
              first_day_of_week: int = DEFAULT_FIRST_DAY) -> tuple[int, int]:
    """(start, end) in ms of the period holding the moment, in `zone`."""
    first, after = period_of(periodicity, local_day(moment_ms, zone), first_day_of_week)
    return local_midnight_ms(first, zone), local_midnight_ms(after, zone)


def previous_period(periodicity: str, moment_ms: int, zone: ZoneInfo,
                    first_day_of_week: int = DEFAULT_FIRST_DAY) -> tuple[int, int]:
    """(start, end) in ms of the period before the one holding the moment."""
    start, _ = period_at(periodicity, moment_ms, zone, first_day_of_week)
    before = local_day(start, zone) - timedelta(days=1)
    first, after = period_of(periodicity, before, first_day_of_week)
    return local_midnight_ms(first, zone), local_midnight_ms(after, zone)


def dates_label(start_ms: int, end_ms: int, zone: ZoneInfo) -> str:
    """`2026-11-01 to 2026-11-30` (the last day shown is the day before the end)."""
    first = local_day(start_ms, zone)
    last = local_day(max(start_ms, end_ms - 1), zone)
    return f"{first.isoformat()} to {last.isoformat()}"


def exclusive_end(end_ms: int, zone: ZoneInfo) -> int:
    """The end as this module means it: a local day's last millisecond is the midnight after
    it; any other moment is itself."""
    after = end_ms + 1
    return after if local_midnight_ms(local_day(after, zone), zone) == after else end_ms


def submit_problem(periodicity: str, partial: bool, start_ms: int, end_ms: int, zone: ZoneInfo,
                   first_day_of_week: int = DEFAULT_FIRST_DAY) -> str | None:
    """None when [start, end) is the period holding its start (or, with `partial`, lies within
    it); else what would be accepted. `end_ms` is exclusive (see `exclusive_end`)."""
    period_start, period_end = period_at(periodicity, start_ms, zone, first_day_of_week)
    if (start_ms, end_ms) == (period_start, period_end):
        return None
    if partial and period_start <= start_ms < end_ms <= period_end:
        return None
    whole = dates_label(period_start, period_end, zone)
    if partial:
        return f"submit days within one {NOUNS[known(periodicity)]}, e.g. {whole}"
    return f"submit the whole {NOUNS[known(periodicity)]}, {whole}"


def closed_since(periodicity: str, start_ms: int, zone: ZoneInfo, first_day_of_week: int,
                 days: int) -> int:
    """The moment from which the period holding `start_ms` takes no more time, when periods
    are turned off `days` days after they end (`turnOffPeriodAfter`)."""
    _, end = period_at(periodicity, start_ms, zone, first_day_of_week)
    return local_midnight_ms(local_day(end, zone) + timedelta(days=days), zone)
