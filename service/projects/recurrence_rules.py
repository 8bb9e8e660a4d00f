"""A recurrent task's rule (SvcTaskRecurrence) and the dates of its occurrences: pure.

A series is a task with a rule. Its first occurrence (0) is the task's own period; occurrence
`i` starts on the rule's `i`-th date after it (dateutil's rrule, in the organisation's time
zone, at the time of day of the task's start) and lasts as long as the task. Occurrences keep
their numbers whatever is skipped or materialised.

- occurrence: day, workday (Monday to Friday), week (on the `weekPattern` weekdays, 0 = Monday,
  default the start's weekday), month (`monthPattern` dayOfMonth `day`, or dayOfWeek: the
  `week`-th (1-5, -1 = last) `dayOfWeek`; default the start's day of month), year;
  every `frequency` of them.
- The series ends after `count` occurrences, or at `endTime`, whichever comes first; without
  either it does not end (at most MAX_OCCURRENCES are ever numbered).
- holidayBehavior (against the organisation's public holidays): `skip` leaves a date falling on
  a holiday out (the numbering follows the dates left), `shiftForward` / `shiftBackward` moves it
  to the next / previous day that is not one.
- mode `afterCompletion` dates occurrences like `calendar`; materialising one may give it other
  dates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from datetime import date, datetime, timedelta
from itertools import islice
from typing import Any
from zoneinfo import ZoneInfo

from dateutil import rrule

from service.value_words import choice_problem, described

MODES = ("calendar", "afterCompletion")
OCCURRENCES = ("day", "workday", "week", "month", "year")
MONTH_PATTERNS = ("dayOfMonth", "dayOfWeek")
HOLIDAY_BEHAVIORS = ("skip", "shiftForward", "shiftBackward")
DELETE_SCOPES = ("thisSourceOnly", "entireSeries")
MAX_OCCURRENCES = 1000
MAX_FREQUENCY = 1000
_FREQ = {"day": rrule.DAILY, "workday": rrule.DAILY, "week": rrule.WEEKLY,
         "month": rrule.MONTHLY, "year": rrule.YEARLY}
_WEEKDAYS = (rrule.MO, rrule.TU, rrule.WE, rrule.TH, rrule.FR, rrule.SA, rrule.SU)


class RuleProblem(ValueError):
    """A rule that cannot be stored: `field` is the part of the input that is wrong."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def _whole(value: Any, low: int, high: int, field: str, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise RuleProblem(field, f"must be {what} from {low} to {high}, got {described(value)}")
    return value


def _one_of(value: Any, allowed: tuple[str, ...], field: str) -> str:
    if value not in allowed:
        raise RuleProblem(field, choice_problem(allowed, value))
    return str(value)


def _month_pattern(value: Mapping[str, Any]) -> dict[str, Any]:
    kind = _one_of(value.get("type"), MONTH_PATTERNS, "monthPattern.type")
    if kind == "dayOfMonth":
        if value.get("day") is None:
            raise RuleProblem("monthPattern.day", "a dayOfMonth pattern needs its day (1-31)")
        return {"type": kind, "day": _whole(value["day"], 1, 31, "monthPattern.day", "a day")}
    week, weekday = value.get("week"), value.get("dayOfWeek")
    if week is None or weekday is None:
        raise RuleProblem("monthPattern.week" if week is None else "monthPattern.dayOfWeek",
                          "a dayOfWeek pattern needs its week (1-5, -1 = last) and dayOfWeek "
                          "(0 = Monday to 6)")
    if week not in (-1, 1, 2, 3, 4, 5) or isinstance(week, bool):
        raise RuleProblem("monthPattern.week",
                          f"must be 1 to 5 or -1 (last), got {described(week)}")
    return {"type": kind, "week": week,
            "dayOfWeek": _whole(weekday, 0, 6, "monthPattern.dayOfWeek", "a weekday")}


def check_rule(value: Mapping[str, Any]) -> dict[str, Any]:
    """The rule as stored (every key of SvcTaskRecurrence), or RuleProblem naming the field."""
    occurrence = _one_of(value.get("occurrence"), OCCURRENCES, "occurrence")
    rule: dict[str, Any] = {
        "mode": _one_of(value.get("mode"), MODES, "mode"),
        "occurrence": occurrence,
        "frequency": _whole(value.get("frequency"), 1, MAX_FREQUENCY, "frequency",
                            "a whole number"),
        "weekPattern": None, "monthPattern": None, "holidayBehavior": None,
        "endTime": None, "count": None,
    }
    pattern = value.get("weekPattern")
    if pattern is not None:
        if occurrence != "week":
            raise RuleProblem("weekPattern", "only a weekly rule has a weekPattern")
        if not pattern or None in pattern or len(set(pattern)) != len(pattern):
            raise RuleProblem("weekPattern", "must list distinct weekdays 0 (Monday) to 6")
        rule["weekPattern"] = sorted(_whole(d, 0, 6, "weekPattern", "a weekday")
                                     for d in pattern)
    if value.get("monthPattern") is not None:
        if occurrence != "month":
            raise RuleProblem("monthPattern", "only a monthly rule has a monthPattern")
        rule["monthPattern"] = _month_pattern(value["monthPattern"])
    if value.get("holidayBehavior") is not None:
        rule["holidayBehavior"] = _one_of(value["holidayBehavior"], HOLIDAY_BEHAVIORS,
                                          "holidayBehavior")
    if value.get("endTime") is not None:
        rule["endTime"] = _whole(value["endTime"], 0, 2**53, "endTime", "a timestamp (ms)")
    if value.get("count") is not None:
        rule["count"] = _whole(value["count"], 1, MAX_OCCURRENCES, "count", "a whole number")
    return rule


def _rrule(rule: Mapping[str, Any], start: datetime) -> rrule.rrule:
    occurrence = rule["occurrence"]
    options: dict[str, Any] = {"dtstart": start, "interval": rule["frequency"],
                               "count": MAX_OCCURRENCES}
    if occurrence == "workday":
        options["byweekday"] = _WEEKDAYS[:5]
    elif occurrence == "week" and rule.get("weekPattern"):
        options["byweekday"] = [_WEEKDAYS[d] for d in rule["weekPattern"]]
    elif occurrence == "month" and rule.get("monthPattern"):
        pattern = rule["monthPattern"]
        if pattern["type"] == "dayOfMonth":  # days > 28: _day_of_month_dates
            options["bymonthday"] = pattern["day"]
        else:
            options["byweekday"] = _WEEKDAYS[pattern["dayOfWeek"]](pattern["week"])
    if rule.get("endTime") is not None:
        options["until"] = datetime.fromtimestamp(rule["endTime"] / 1000, start.tzinfo)
    return rrule.rrule(_FREQ[occurrence], **options)


def _day_of_month_dates(rule: Mapping[str, Any], start: datetime) -> Iterator[datetime]:
    """Monthly on a day > 28: that day, or the month's last day when it has fewer."""
    day = rule["monthPattern"]["day"]
    base = rrule.rrule(rrule.MONTHLY, dtstart=start.replace(day=1),
                       interval=rule["frequency"], count=MAX_OCCURRENCES)
    until = (datetime.fromtimestamp(rule["endTime"] / 1000, start.tzinfo)
             if rule.get("endTime") is not None else None)
    for first in base:
        last_day = (first.replace(day=28) + timedelta(days=4)).replace(day=1) - timedelta(days=1)
        candidate = first.replace(day=min(day, last_day.day))
        if candidate < start:
            continue
        if until is not None and candidate > until:
            return
        yield candidate


def _shift(day: datetime, step: int, is_holiday: Callable[[date], bool]) -> datetime:
    for _ in range(366):
        if not is_holiday(day.date()):
            return day
        day += timedelta(days=step)
    return day


def occurrence_starts(rule: Mapping[str, Any], start_ms: int, zone: ZoneInfo, upto: int,
                      is_holiday: Callable[[date], bool] = lambda _d: False) -> list[int]:
    """Start times (ms) of occurrences 0..upto (fewer when the series ends before)."""
    start = datetime.fromtimestamp(start_ms / 1000, zone)
    pattern = rule.get("monthPattern") or {}
    dates: Iterator[datetime]
    if pattern.get("type") == "dayOfMonth" and pattern["day"] > 28:
        dates = _day_of_month_dates(rule, start)
    else:
        dates = iter(_rrule(rule, start))
    count = min(int(rule.get("count") or MAX_OCCURRENCES), MAX_OCCURRENCES)
    rule_dates = (when for when in dates if when > start)
    behaviour = rule.get("holidayBehavior")
    found = [start_ms]
    for when in islice(rule_dates, count - 1):
        if len(found) > upto:
            break
        if behaviour is not None and is_holiday(when.date()):
            if behaviour == "skip":
                continue
            when = _shift(when, 1 if behaviour == "shiftForward" else -1, is_holiday)
        local = datetime.combine(when.date(), start.timetz().replace(tzinfo=None), zone)
        ms = int(local.timestamp() * 1000)
        if ms <= found[-1]:
            continue  # shifted onto (or before) the previous occurrence
        found.append(ms)
    return found[:upto + 1]


def occurrence_start(rule: Mapping[str, Any], start_ms: int, zone: ZoneInfo, index: int,
                     is_holiday: Callable[[date], bool] = lambda _d: False) -> int | None:
    """Start (ms) of occurrence `index`, None when the series has no such occurrence."""
    if index < 0:
        return None
    starts = occurrence_starts(rule, start_ms, zone, index, is_holiday)
    return starts[index] if index < len(starts) else None


def split_rules(rule: Mapping[str, Any], index: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The rules of a series split at occurrence `index` (>= 1): the first part ends before it
    (its last occurrence is `index - 1`), the second starts with it and keeps what is left of a
    `count`."""
    count = rule.get("count")
    first = {**rule, "count": index if count is None else min(index, int(count))}
    second = dict(rule)
    if rule.get("count") is not None:
        second["count"] = max(int(rule["count"]) - index, 1)
    return first, second
