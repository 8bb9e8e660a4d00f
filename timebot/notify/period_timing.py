"""When a person's period reminder goes (pure): their period is their `periodicity` (from their
`firstDayOfWeek`, in their time zone: plumbing/periods.py), and `timesheetReminder` says when:

- unset: when the period ends (its next day's 00:00);
- `{timing: nextStart, hour: h}`: on the first day of the next period at h:00;
- `{timing: currentEnd, hour: h}`: on the period's last day at h:00, before it ends.

A reminder is due from that moment for REMINDER_GRACE_MS (a process that was down catches up).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from plumbing import periods
from timebot.notify.periods import REMINDER_GRACE_MS, Period


def periodicity_of(person: Mapping[str, Any]) -> str:
    """The person's periodicity from GraphQL `timeSettings { periodicity { value } }`."""
    settings = person.get("timeSettings") or {}
    return periods.known((settings.get("periodicity") or {}).get("value"))


def first_day_of(person: Mapping[str, Any]) -> int:
    value = ((person.get("localisation") or {}).get("firstDayOfWeek") or {}).get("value")
    return value if isinstance(value, int) else periods.DEFAULT_FIRST_DAY


def reminder_of(person: Mapping[str, Any]) -> Mapping[str, Any] | None:
    settings = person.get("timeSettings") or {}
    value = (settings.get("timesheetReminder") or {}).get("value")
    return value if isinstance(value, Mapping) else None


def noun_of(person: Mapping[str, Any]) -> str:
    return periods.NOUNS[periodicity_of(person)]


def _at_hour(day_ms: int, hour: int, zone_name: str) -> int:
    zone = periods.zone_of(zone_name)
    day = periods.local_day(day_ms, zone)
    moment = datetime(day.year, day.month, day.day, tzinfo=zone) + timedelta(hours=hour)
    return int(moment.timestamp() * 1000)


def due_from(period: Period, reminder: Mapping[str, Any] | None, zone_name: str) -> int:
    """The moment the period's reminder is due from."""
    timing = (reminder or {}).get("timing")
    hour = (reminder or {}).get("hour")
    hour = hour if isinstance(hour, int) and 0 <= hour <= 23 else 0
    if timing == "currentEnd":
        return _at_hour(period.end_ms - 1, hour, zone_name)
    if timing == "nextStart":
        return _at_hour(period.end_ms, hour, zone_name)
    return period.end_ms


def reminder_slots(now_ms: int, person: Mapping[str, Any], zone_name: str
                   ) -> tuple[Period, int, int]:
    """(the period whose reminder is the latest due at or before now, the moment it is due
    from, the moment the next period's reminder is due from)."""
    kind, first = periodicity_of(person), first_day_of(person)
    zone = periods.zone_of(zone_name)
    current = periods.period_at(kind, now_ms, zone, first)
    before = periods.previous_period(kind, now_ms, zone, first)
    older = periods.previous_period(kind, before[0], zone, first)
    reminder = reminder_of(person)
    candidates = [Period(*p) for p in (older, before, current)]
    dues = [due_from(p, reminder, zone_name) for p in candidates]
    latest = max(i for i in range(3) if dues[i] <= now_ms) if dues[0] <= now_ms else 0
    if latest == 2:
        nxt = Period(*periods.period_at(kind, current[1], zone, first))
        upcoming = due_from(nxt, reminder, zone_name)
    else:
        upcoming = dues[latest + 1]
    return candidates[latest], dues[latest], upcoming


def due_now(now_ms: int, due_ms: int) -> bool:
    return due_ms <= now_ms < due_ms + REMINDER_GRACE_MS
