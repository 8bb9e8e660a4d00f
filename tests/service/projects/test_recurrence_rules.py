"""The dates of a series' occurrences (service/projects/recurrence_rules.py, pure): patterns, the
end
of a series, holidays, the organisation's time zone, and a split's two rules."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from service.projects.recurrence_rules import (
    RuleProblem,
    check_rule,
    occurrence_start,
    occurrence_starts,
    split_rules,
)

PARIS = ZoneInfo("Europe/Paris")
START = int(datetime(2026, 1, 30, 9, tzinfo=PARIS).timestamp() * 1000)  # a Friday


def days(rule: dict[str, Any], upto: int = 5, holidays: set[date] | None = None) -> list[str]:
    checked = check_rule({"mode": "calendar", "frequency": 1, **rule})
    starts = occurrence_starts(checked, START, PARIS, upto,
                               lambda day: day in (holidays or set()))
    return [datetime.fromtimestamp(ms / 1000, PARIS).strftime("%m-%d %H:%M") for ms in starts]


def test_patterns() -> None:
    assert days({"occurrence": "week", "weekPattern": [0, 2]}, 3) == [
        "01-30 09:00", "02-02 09:00", "02-04 09:00", "02-09 09:00"]
    assert days({"occurrence": "workday"}, 2) == ["01-30 09:00", "02-02 09:00", "02-03 09:00"]
    # the 31st, or the month's last day; 09:00 local across the change to summer time
    assert days({"occurrence": "month", "monthPattern": {"type": "dayOfMonth", "day": 31}},
                3) == ["01-30 09:00", "01-31 09:00", "02-28 09:00", "03-31 09:00"]
    assert days({"occurrence": "month", "monthPattern": {"type": "dayOfWeek", "week": -1,
                                                        "dayOfWeek": 4}}, 2) == [
        "01-30 09:00", "02-27 09:00", "03-27 09:00"]
    assert days({"occurrence": "day", "frequency": 2, "count": 3}) == [
        "01-30 09:00", "02-01 09:00", "02-03 09:00"]
    end = int(datetime(2026, 2, 2, 12, tzinfo=PARIS).timestamp() * 1000)
    assert days({"occurrence": "day", "endTime": end}) == [
        "01-30 09:00", "01-31 09:00", "02-01 09:00", "02-02 09:00"]


def test_holidays() -> None:
    holidays = {date(2026, 2, 2)}
    rule = {"occurrence": "workday", "count": 4}
    assert days({**rule, "holidayBehavior": "skip"}, holidays=holidays) == [
        "01-30 09:00", "02-03 09:00", "02-04 09:00"]
    assert days({**rule, "holidayBehavior": "shiftForward"}, holidays=holidays) == [
        "01-30 09:00", "02-03 09:00", "02-04 09:00"]  # moved onto the next: one date left
    assert days({"occurrence": "week", "holidayBehavior": "shiftBackward", "count": 3},
                holidays={date(2026, 2, 6)}) == ["01-30 09:00", "02-05 09:00", "02-13 09:00"]


def test_an_endless_series_numbers_at_most_a_thousand() -> None:
    rule = check_rule({"mode": "calendar", "occurrence": "day", "frequency": 1})
    assert occurrence_start(rule, START, PARIS, 999) is not None
    assert occurrence_start(rule, START, PARIS, 1000) is None
    assert occurrence_start(rule, START, PARIS, -1) is None


def test_split() -> None:
    rule = check_rule({"mode": "calendar", "occurrence": "day", "frequency": 1, "count": 10})
    first, second = split_rules(rule, 4)
    assert (first["count"], second["count"]) == (4, 6)
    endless = check_rule({"mode": "calendar", "occurrence": "day", "frequency": 1})
    assert split_rules(endless, 4)[1]["count"] is None


@pytest.mark.parametrize(("rule", "field"), [
    ({"occurrence": "fortnight"}, "occurrence"),
    ({"frequency": True}, "frequency"),
    ({"occurrence": "week", "weekPattern": [1, 1]}, "weekPattern"),
    ({"occurrence": "month", "monthPattern": {"type": "dayOfMonth"}}, "monthPattern.day"),
    ({"occurrence": "month", "monthPattern": {"type": "dayOfWeek", "week": 2}},
     "monthPattern.dayOfWeek"),
])
def test_refusals_name_the_field(rule: dict[str, Any], field: str) -> None:
    with pytest.raises(RuleProblem) as problem:
        check_rule({"mode": "calendar", "occurrence": "day", "frequency": 1, **rule})
    assert problem.value.field == field
