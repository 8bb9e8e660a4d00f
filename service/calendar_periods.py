"""The days a report covers (SvcReportParamPeriodInput without `custom`): the current,
previous or next day, week, two weeks, half month, month, quarter or year around a day, the
year to date and the last twelve months. Pure: dates in, [first day, day after the last) out.

Weeks start on Monday; two-week periods are pairs of weeks counted from Monday 1970-01-05;
half months are the 1st-15th and the 16th-last day.
"""

from __future__ import annotations

from datetime import date, timedelta

TARGETS = ("current", "previous", "next", "yearToDay", "last12Months", "custom")
PERIODS = ("day", "week", "biWeekly", "semiMonth", "month", "quarter", "year")
_EPOCH_MONDAY = date(1970, 1, 5)


def _month_start(year: int, month: int) -> date:
    year += (month - 1) // 12
    month = (month - 1) % 12 + 1
    return date(year, month, 1)


def period_around(period: str, day: date) -> tuple[date, date]:
    """[first day, day after the last) of the period that contains `day`."""
    if period == "day":
        return day, day + timedelta(days=1)
    if period == "week":
        start = day - timedelta(days=day.weekday())
        return start, start + timedelta(days=7)
    if period == "biWeekly":
        weeks = (day - _EPOCH_MONDAY).days // 7
        start = _EPOCH_MONDAY + timedelta(days=(weeks - weeks % 2) * 7)
        return start, start + timedelta(days=14)
    if period == "semiMonth":
        if day.day <= 15:
            return day.replace(day=1), day.replace(day=16)
        return day.replace(day=16), _month_start(day.year, day.month + 1)
    if period == "month":
        return day.replace(day=1), _month_start(day.year, day.month + 1)
    if period == "quarter":
        first = (day.month - 1) // 3 * 3 + 1
        return date(day.year, first, 1), _month_start(day.year, first + 3)
    if period == "year":
        return date(day.year, 1, 1), date(day.year + 1, 1, 1)
    raise ValueError(period)


def report_days(target: str, period: str | None, today: date) -> tuple[date, date]:
    """[first day, day after the last) of a relative report period; ValueError names what is
    missing or unknown ("target" or "period")."""
    if target == "yearToDay":
        return date(today.year, 1, 1), today + timedelta(days=1)
    if target == "last12Months":
        try:
            back = today.replace(year=today.year - 1)
        except ValueError:  # 29 February
            back = today.replace(year=today.year - 1, day=28)
        return back + timedelta(days=1), today + timedelta(days=1)
    if target not in ("current", "previous", "next"):
        raise ValueError("target")
    if period not in PERIODS:
        raise ValueError("period")
    start, end = period_around(period, today)
    if target == "previous":
        return period_around(period, start - timedelta(days=1))
    if target == "next":
        return period_around(period, end)
    return start, end
