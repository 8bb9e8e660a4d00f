"""The due-report rule (timebot/notify/report_schedule.py): each recurrence's send moment,
the figures it covers, one key per occurrence, the grace window and lastRun. Pure."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from timebot.notify.report_schedule import (
    GRACE_MS,
    Recurrence,
    cycle_of,
    due_occurrence,
    figures,
    send_day,
)

PARIS = ZoneInfo("Europe/Paris")
HOUR = 3_600_000


def at(day: date, hour: int = 0, minute: int = 0) -> int:
    return int(datetime.combine(day, time(hour, minute), tzinfo=PARIS).timestamp() * 1000)


WEEKLY = Recurrence("week", "previous", "afterEnd", 0, 8)


@pytest.mark.parametrize(("period", "day", "expected"), [
    ("day", date(2026, 3, 4), (date(2026, 3, 4), date(2026, 3, 5))),
    ("week", date(2026, 3, 4), (date(2026, 3, 2), date(2026, 3, 9))),
    ("biWeekly", date(2026, 3, 4), (date(2026, 2, 23), date(2026, 3, 9))),
    ("semiMonth", date(2026, 2, 20), (date(2026, 2, 16), date(2026, 3, 1))),
    ("semiMonth", date(2026, 2, 15), (date(2026, 2, 1), date(2026, 2, 16))),
    ("month", date(2026, 12, 31), (date(2026, 12, 1), date(2027, 1, 1))),
    ("quarter", date(2026, 11, 26), (date(2026, 10, 1), date(2027, 1, 1))),
])
def test_cycles(period: str, day: date, expected: tuple[date, date]) -> None:
    assert cycle_of(period, day) == expected


def test_send_days_and_figures() -> None:
    march = (date(2026, 3, 1), date(2026, 4, 1))
    assert send_day(Recurrence("month", "previous", "afterEnd", 2, 8), *march) == date(2026, 4, 3)
    assert send_day(Recurrence("month", "current", "beforeEnd", 0, 8), *march) == \
        date(2026, 3, 31)
    assert send_day(Recurrence("month", "current", "beforeEnd", 3, 8), *march) == \
        date(2026, 3, 28)
    feb = (date(2026, 2, 1), date(2026, 3, 1))
    assert send_day(Recurrence("month", "current", "dayOfMonth", 31, 8), *feb) == \
        date(2026, 2, 28)
    sent = date(2026, 3, 9)  # a Monday
    assert figures(WEEKLY, sent) == (date(2026, 3, 2), date(2026, 3, 9))
    assert figures(Recurrence("week", "current", "afterEnd", 0, 8), sent) == \
        (date(2026, 3, 9), date(2026, 3, 16))
    assert figures(Recurrence("month", "yearToDay", "afterEnd", 0, 8), sent) == \
        (date(2026, 1, 1), date(2026, 3, 10))
    assert figures(Recurrence("month", "last12Months", "afterEnd", 0, 8), sent) == \
        (date(2025, 3, 1), date(2026, 3, 10))


def test_a_weekly_report_is_due_once_per_week_from_monday_8am() -> None:
    monday = date(2026, 3, 9)
    created = at(date(2026, 1, 1))
    # a minute before: last week's moment is past its grace window, this week's not yet come
    assert due_occurrence("r1", WEEKLY, at(monday, 7, 59), PARIS, created) is None
    due = due_occurrence("r1", WEEKLY, at(monday, 8), PARIS, created)
    assert due is not None and due.key == "report:r1:2026-03-09"
    assert (due.start_ms, due.end_ms) == (at(date(2026, 3, 2)), at(monday))
    assert due.send_ms == at(monday, 8)
    # every tick until the grace window ends names the same occurrence: sent once by key
    later = due_occurrence("r1", WEEKLY, at(monday, 8) + GRACE_MS, PARIS, created)
    assert later == due
    assert due_occurrence("r1", WEEKLY, at(monday, 8) + GRACE_MS + 1, PARIS, created) is None
    # a report made (or enabled) after the moment does not send it
    assert due_occurrence("r1", WEEKLY, at(monday, 9), PARIS, at(monday, 8, 30)) is None


def test_across_daylight_saving_the_hour_stays_local() -> None:
    monday = date(2026, 3, 30)  # the day after the clocks went forward
    due = due_occurrence("r", WEEKLY, at(monday, 8), PARIS, 0)
    assert due is not None and due.send_ms == at(monday, 8)
    assert due.end_ms - due.start_ms == 7 * 24 * HOUR - HOUR
    assert due_occurrence("r", WEEKLY, at(monday, 8) - 1, PARIS, at(monday - timedelta(1))) \
        is None
