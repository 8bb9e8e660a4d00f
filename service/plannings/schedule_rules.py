"""Pure rules of work schedules: the days of a schedule type, validating their edits, which
timeline entry is in force on a day, and a person's working days and expected time.

A schedule type is a cycle of `length` days; day 0 is the local calendar day of its
`calendarStartTime`. Each day has a duration (ms), a work-from-home flag and optional time
pairs ([start, end] in ms after local midnight, ordered, not overlapping, within the day;
when set, the duration is their sum). A timeline is a list of (schedule type, start) pairs;
the entry in force on a day is the one with the latest start at or before the day's start
(no start: from the beginning). The most specific level with an entry in force wins: the
person, else the deepest of their tags (then by name), else the organisation. With no
schedule anywhere the default applies: Monday to Friday, 8 hours (DEFAULT_DAY_MS).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from service.errors import BadInput

DAY_MS = 86_400_000
DEFAULT_DAY_MS = 8 * 3_600_000
MAX_LENGTH = 366


@dataclass(frozen=True)
class Day:
    duration: int
    wfh: bool
    time_pairs: tuple[tuple[int, int], ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {"duration": self.duration, "wfh": self.wfh,
                "timePairs": [list(pair) for pair in self.time_pairs]}


EMPTY_DAY = Day(0, False)


def day_from_json(value: Mapping[str, Any] | None) -> Day:
    if not value:
        return EMPTY_DAY
    pairs = tuple((int(p[0]), int(p[1])) for p in value.get("timePairs") or [])
    return Day(int(value.get("duration") or 0), bool(value.get("wfh")), pairs)


def days_from_json(values: Sequence[Any] | None, length: int) -> list[Day]:
    """Exactly `length` days (missing ones empty)."""
    days = [day_from_json(v) for v in (values or [])][:length]
    return days + [EMPTY_DAY] * (length - len(days))


def check_length(length: int) -> int:
    if not 1 <= length <= MAX_LENGTH:
        raise BadInput("length", f"must be a number of days from 1 to {MAX_LENGTH}")
    return length


def check_day_number(day_number: int, length: int) -> int:
    if not 0 <= day_number < length:
        raise BadInput("dayNumber", f"must be from 0 to {length - 1} (the schedule has "
                                    f"{length} days, numbered from 0)")
    return day_number


def check_duration(duration: int) -> int:
    if not 0 <= duration <= DAY_MS:
        raise BadInput("duration", f"must be from 0 to {DAY_MS} ms (one day)")
    return duration


def check_time_pairs(pairs: Sequence[Sequence[int | None] | None]) -> tuple[tuple[int, int], ...]:
    """Ordered [start, end] pairs in ms after midnight, within the day, not overlapping."""
    checked: list[tuple[int, int]] = []
    for index, pair in enumerate(pairs):
        argument = f"timePairs[{index}]"
        if pair is None or len(pair) != 2 or pair[0] is None or pair[1] is None:
            raise BadInput(argument, "must be a pair [start, end] of ms after midnight")
        start, end = int(pair[0]), int(pair[1])
        if not 0 <= start < end <= DAY_MS:
            raise BadInput(argument, f"must have 0 <= start < end <= {DAY_MS} (within the day)")
        if checked and start < checked[-1][1]:
            raise BadInput(argument, "must start after the previous pair ends (ordered, "
                                     "not overlapping)")
        checked.append((start, end))
    return tuple(checked)


def with_time_pairs(day: Day, pairs: tuple[tuple[int, int], ...]) -> Day:
    if not pairs:
        return Day(day.duration, day.wfh)
    return Day(sum(end - start for start, end in pairs), day.wfh, pairs)


def with_duration(day: Day, duration: int) -> Day:
    """A new duration; time pairs that no longer add up to it are dropped."""
    pairs = day.time_pairs if sum(e - s for s, e in day.time_pairs) == duration else ()
    return Day(duration, day.wfh, pairs)


def resized(days: Sequence[Day], length: int) -> list[Day]:
    return list(days[:length]) + [EMPTY_DAY] * (length - len(days))


def day_index(day: date, calendar_start: date, length: int) -> int:
    return (day - calendar_start).days % length


@dataclass(frozen=True)
class Schedule:
    """A schedule type as the rules need it."""

    id: str
    calendar_start: date
    days: tuple[Day, ...]

    def day(self, on: date) -> Day:
        return self.days[day_index(on, self.calendar_start, len(self.days))]


DEFAULT_WEEK = tuple(Day(DEFAULT_DAY_MS if n < 5 else 0, False) for n in range(7))
DEFAULT_SCHEDULE = Schedule("", date(2024, 1, 1), DEFAULT_WEEK)  # 2024-01-01 is a Monday


@dataclass(frozen=True)
class Entry:
    schedule_id: str
    start_ms: int | None


def in_force(entries: Sequence[Entry], day_start_ms: int) -> str | None:
    """The schedule type of the entry with the latest start at or before the day's start."""
    best: Entry | None = None
    for entry in entries:
        if entry.start_ms is not None and entry.start_ms > day_start_ms:
            continue
        if best is None or (entry.start_ms or -1) > (best.start_ms or -1):
            best = entry
    return best.schedule_id if best is not None else None


def schedule_for_day(levels: Sequence[Sequence[Entry]], day_start_ms: int) -> str | None:
    """`levels` from the most specific (person, then tags deepest first, then organisation):
    the first level with an entry in force decides."""
    for entries in levels:
        found = in_force(entries, day_start_ms)
        if found is not None:
            return found
    return None


@dataclass(frozen=True)
class PlannedDay:
    day: date
    start_ms: int
    schedule_id: str | None  # None: the default schedule
    scheduled: Day
    holiday: str | None  # the name of the public holiday on the day

    @property
    def duration(self) -> int:
        return 0 if self.holiday is not None else self.scheduled.duration

    @property
    def working(self) -> bool:
        return self.duration > 0


def plan_day(
    day: date,
    start_ms: int,
    levels: Sequence[Sequence[Entry]],
    schedules: Mapping[str, Schedule],
    holidays: Mapping[date, str],
) -> PlannedDay:
    """working_day(person, date): the schedule in force on the day minus public holidays."""
    schedule_id = schedule_for_day(levels, start_ms)
    schedule = schedules.get(schedule_id or "", DEFAULT_SCHEDULE)
    return PlannedDay(day, start_ms, schedule_id if schedule_id in schedules else None,
                      schedule.day(day), holidays.get(day))


def expected_ms(days: Sequence[PlannedDay]) -> int:
    """expected_ms(person, period): the scheduled time of the period's days."""
    return sum(day.duration for day in days)


def out_of_schedule_refusal(allowed: bool | None, day: PlannedDay) -> str | None:
    """allowTimeRecordOutOfScheduleDaily = false: no time on a day without scheduled time."""
    if allowed is not False or day.working:
        return None
    why = f"a public holiday ({day.holiday})" if day.holiday else "not a working day"
    return (f"The timesheet settings do not allow recording time out of the schedule: "
            f"{day.day.isoformat()} is {why} for this person")
