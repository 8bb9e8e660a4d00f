"""When a saved report is due (its recurrence, as GraphQL `SvcReport.reccurence` gives it),
which figures it sends, and the key that makes each occurrence go out once.

Pure: the sender (timebot/notify/due_reports.py, from the scheduler) lists the enabled
reports, asks `due_occurrence` for each and the channels queue what it returns under
`Occurrence.key` (per recipient), so that a restart, a second process or a late tick never
sends one twice.

A recurrence tiles time into cycles of its `period` (day; week from Monday; biWeekly: two
weeks from Monday 2024-01-01; semiMonth: the 1st-15th and the 16th-end; month; quarter), in
the report owner's time zone. Each cycle has one send moment at `hourOfDay`:
`afterEnd`: `sendOffset` days after the cycle's end (0: its first day after), `beforeEnd`:
`sendOffset` days before its last day, `dayOfMonth`: on day `sendOffset` (1-31, the last
day of a shorter month) of the month the cycle ends in. The figures cover, from the send
moment: `current` the cycle holding it, `previous` the cycle before, `yearToDay` the year
up to the send day (included), `last12Months` the twelve months before the send day's month
and that month up to the send day.
A moment is due from itself for GRACE_MS (a process that was down catches up; an old one
is not sent late), and never before `not_before_ms` (the report's lastRun: a report made or
enabled today does not send yesterday's).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

GRACE_MS = 2 * 86_400_000
_BIWEEKLY_EPOCH = date(2024, 1, 1)  # a Monday
PERIODS = ("day", "week", "biWeekly", "semiMonth", "month", "quarter")


@dataclass(frozen=True)
class Recurrence:
    period: str
    target: str
    send_mode: str
    send_offset: int
    hour_of_day: int


@dataclass(frozen=True)
class Occurrence:
    send_ms: int
    start_ms: int  # the figures' period, [start, end)
    end_ms: int
    key: str


def _month_start(day: date, months: int = 0) -> date:
    index = day.year * 12 + day.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def cycle_of(period: str, day: date) -> tuple[date, date]:
    """[first, after) of the cycle holding `day`."""
    if period == "day":
        return day, day + timedelta(days=1)
    if period == "week":
        first = day - timedelta(days=day.weekday())
        return first, first + timedelta(days=7)
    if period == "biWeekly":
        first = day - timedelta(days=(day - _BIWEEKLY_EPOCH).days % 14)
        return first, first + timedelta(days=14)
    if period == "semiMonth":
        if day.day <= 15:
            return day.replace(day=1), day.replace(day=16)
        return day.replace(day=16), _month_start(day, 1)
    if period == "month":
        return day.replace(day=1), _month_start(day, 1)
    if period == "quarter":
        first = date(day.year, (day.month - 1) // 3 * 3 + 1, 1)
        return first, _month_start(first, 3)
    raise ValueError(f"unknown recurrence period {period!r}")


def send_day(recurrence: Recurrence, first: date, after: date) -> date:
    offset = timedelta(days=recurrence.send_offset)
    if recurrence.send_mode == "afterEnd":
        return after + offset
    if recurrence.send_mode == "beforeEnd":
        return max(first, after - timedelta(days=1) - offset)
    if recurrence.send_mode == "dayOfMonth":
        month = (after - timedelta(days=1)).replace(day=1)
        last = (_month_start(month, 1) - timedelta(days=1)).day
        return month.replace(day=max(1, min(recurrence.send_offset, last)))
    raise ValueError(f"unknown send mode {recurrence.send_mode!r}")


def figures(recurrence: Recurrence, sent: date) -> tuple[date, date]:
    """[first, after) of the days the report covers when sent on `sent`."""
    if recurrence.target == "current":
        return cycle_of(recurrence.period, sent)
    if recurrence.target == "previous":
        first, _ = cycle_of(recurrence.period, sent)
        return cycle_of(recurrence.period, first - timedelta(days=1))
    if recurrence.target == "yearToDay":
        return date(sent.year, 1, 1), sent + timedelta(days=1)
    if recurrence.target == "last12Months":
        return _month_start(sent, -12), sent + timedelta(days=1)
    raise ValueError(f"unknown recurrence target {recurrence.target!r}")


def _ms(day: date, zone: ZoneInfo, hour: int = 0) -> int:
    return int(datetime.combine(day, time(hour), tzinfo=zone).timestamp() * 1000)


def _send_days(recurrence: Recurrence, today: date, days_after: int) -> list[date]:
    """The send days of the cycles around `today`, from 35 days before to `days_after` days
    after it (offsets are at most 31 days either side of a cycle's end), latest first."""
    cycles = {cycle_of(recurrence.period, today + timedelta(days=shift))
              for shift in range(-35, days_after)}
    return sorted({send_day(recurrence, first, after) for first, after in cycles}, reverse=True)


def _occurrence(report_id: str, recurrence: Recurrence, sent: date, zone: ZoneInfo
                ) -> Occurrence:
    first, after = figures(recurrence, sent)
    return Occurrence(_ms(sent, zone, recurrence.hour_of_day), _ms(first, zone),
                      _ms(after, zone), f"report:{report_id}:{sent.isoformat()}")


def due_occurrence(report_id: str, recurrence: Recurrence, now_ms: int, zone: ZoneInfo,
                   not_before_ms: int) -> Occurrence | None:
    """The occurrence due now, if any (the latest send moment in [now - GRACE_MS, now])."""
    today = datetime.fromtimestamp(now_ms / 1000, zone).date()
    for sent in _send_days(recurrence, today, 33):
        send_ms = _ms(sent, zone, recurrence.hour_of_day)
        if send_ms > now_ms:
            continue
        if now_ms - send_ms > GRACE_MS or send_ms < not_before_ms:
            return None
        return _occurrence(report_id, recurrence, sent, zone)
    return None


def next_occurrence(report_id: str, recurrence: Recurrence, now_ms: int, zone: ZoneInfo
                    ) -> Occurrence:
    """The first occurrence whose send moment is after now (a quarter's cycle and its
    offset lie within 130 days)."""
    today = datetime.fromtimestamp(now_ms / 1000, zone).date()
    later = [sent for sent in _send_days(recurrence, today, 130)
             if _ms(sent, zone, recurrence.hour_of_day) > now_ms]
    return _occurrence(report_id, recurrence, min(later), zone)
