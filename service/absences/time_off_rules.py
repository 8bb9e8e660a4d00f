"""Time-off allowances and accrual: the balance as a pure function of
(accrual settings, allowance, absences, as-of date).

Amounts are exact fractions in the absence type's unit (days or hours); nothing is summed
in floating point, so a balance never drifts.

An allowance covers [start, end) (dates, end exclusive). A recurrent allowance repeats
back to back with the same length (whole months when start and end fall on the same day
of the month, else the same number of days); each repetition is a *cycle*. A
non-recurrent allowance has one cycle, whose absences may also fall in
[end, endDateExtension) when an extension is set.

Per cycle:
- carried in: what the previous cycle carried forward (0 for the first);
- awarded: `available` at the cycle's first day, plus, when accrual is enabled for the
  absence type, `quantity` for every accrual period, on the period's first day, last day
  or the day after it (`awarded`); only what is awarded on or before the as-of date
  counts. Periods count from the allowance's start; in a non-recurrent allowance every
  period that starts in it is awarded (the last one possibly on the day after its end),
  in a recurrent one each award goes to the cycle it falls in;
- correction: the allowance's accrued adjustment, in the first cycle;
- consumed: every absence dated in the cycle, however far ahead (an absence counts
  against the allowance as soon as it is recorded; approval does not gate it);
- closing = carried in + awarded + correction - consumed.
When a cycle has ended before the as-of date, a positive closing carries forward up to the
carry-forward limit (default 0) and the excess is forfeited; a negative closing (allowed
overdraft) carries forward whole. The balance is the closing of the last cycle, so
balance == awarded + correction - consumed - forfeited, summed over the cycles.

Accrual periods (`periodStartDay` = s): daily; weekly from ISO weekday s (1 = Monday);
bi-weekly from weekday s, fortnights counted from Monday 1970-01-05; semi-monthly from day
s and day s + 15 of each month (at most the month's last day; s <= 15); monthly from day s;
quarterly from day s of January, April, July and October; semi-annually from day s of
January and July; annually from day s of January (s <= 28 for the month-based ones).
"""

from __future__ import annotations

import calendar
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, tzinfo
from decimal import Decimal
from fractions import Fraction

HOUR_MS = 3_600_000
WORKING_DAY_MS = 8 * HOUR_MS
ONE_DAY = timedelta(days=1)

PERIODICITIES = (
    "daily",
    "weekly",
    "biWeekly",
    "semiMonthly",
    "monthly",
    "quarterly",
    "semiAnnually",
    "annually",
)
DAY_OPTIONS = ("firstDay", "lastDay", "firstDayNextPeriod")
_MONTHS = {
    "monthly": tuple(range(1, 13)),
    "semiMonthly": tuple(range(1, 13)),
    "quarterly": (1, 4, 7, 10),
    "semiAnnually": (1, 7),
    "annually": (1,),
}
_FORTNIGHT_ANCHOR = date(1970, 1, 5)  # a Monday
_LONGEST_PERIOD_DAYS = 367


def exact(value: float | int | str) -> Fraction:
    """A float from the API or a column as the exact decimal it was written as."""
    return Fraction(Decimal(repr(value) if isinstance(value, float) else str(value)))


def start_day_problem(periodicity: str, start_day: int) -> str | None:
    """Why `start_day` does not fit `periodicity`, or None when it does."""
    if periodicity == "daily":
        return None if 1 <= start_day <= 28 else "must be between 1 and 28"
    if periodicity in ("weekly", "biWeekly"):
        return None if 1 <= start_day <= 7 else (
            f"must be an ISO weekday between 1 (Monday) and 7 for a {periodicity} accrual")
    if periodicity == "semiMonthly":
        return None if 1 <= start_day <= 15 else (
            "must be between 1 and 15 for a semiMonthly accrual")
    return None if 1 <= start_day <= 28 else "must be a day of the month between 1 and 28"


@dataclass(frozen=True)
class Accrual:
    enabled: bool = False
    periodicity: str = "monthly"
    period_start_day: int = 1
    awarded: str = "firstDay"
    quantity: Fraction = Fraction(0)
    allow_negative_booking: bool = False


@dataclass(frozen=True)
class Allowance:
    start: date
    end: date  # exclusive
    available: Fraction = Fraction(0)
    end_date_extension: date | None = None  # exclusive
    carry_forward_limit: Fraction = Fraction(0)
    accrued_correction: Fraction = Fraction(0)
    allow_negative_balance: bool = False
    recurrent: bool = False


@dataclass(frozen=True)
class Cycle:
    start: date
    end: date  # exclusive; absences up to the extension count in a non-recurrent one
    carried_in: Fraction
    awarded: Fraction
    correction: Fraction
    consumed: Fraction
    forfeited: Fraction = Fraction(0)
    carried_out: Fraction | None = None  # None while the cycle is still open

    @property
    def closing(self) -> Fraction:
        return self.carried_in + self.awarded + self.correction - self.consumed


@dataclass(frozen=True)
class Ledger:
    cycles: tuple[Cycle, ...] = field(default_factory=tuple)

    @property
    def balance(self) -> Fraction:
        return self.cycles[-1].closing if self.cycles else Fraction(0)

    @property
    def awarded(self) -> Fraction:
        return sum((cycle.awarded for cycle in self.cycles), Fraction(0))

    @property
    def consumed(self) -> Fraction:
        return sum((cycle.consumed for cycle in self.cycles), Fraction(0))

    @property
    def forfeited(self) -> Fraction:
        return sum((cycle.forfeited for cycle in self.cycles), Fraction(0))


# ---------------------------------------------------------------------------- periods


def _add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    last = calendar.monthrange(year, month + 1)[1]
    return date(year, month + 1, min(day.day, last))


def period_starts(periodicity: str, start_day: int, lo: date) -> Iterator[date]:
    """The accrual periods' first days on or after `lo`, in order, without end."""
    if periodicity == "daily":
        day = lo
        while True:
            yield day
            day += ONE_DAY
    if periodicity in ("weekly", "biWeekly"):
        step = 7 if periodicity == "weekly" else 14
        anchor = _FORTNIGHT_ANCHOR + timedelta(days=start_day - 1)
        day = lo + timedelta(days=(anchor - lo).days % step)
        while True:
            yield day
            day += timedelta(days=step)
    months = _MONTHS[periodicity]
    year, month = lo.year, lo.month
    while True:
        if month in months:
            last = calendar.monthrange(year, month)[1]
            days = [start_day]
            if periodicity == "semiMonthly":
                days.append(min(start_day + 15, last))
            for number in days:
                candidate = date(year, month, number)
                if candidate >= lo:
                    yield candidate
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)


def award_dates(accrual: Accrual, lo: date, hi: date) -> list[date]:
    """When each accrual period starting in [lo, hi) is awarded."""
    if not accrual.enabled or accrual.quantity == 0 or hi <= lo:
        return []
    found: list[date] = []
    starts = period_starts(accrual.periodicity, accrual.period_start_day, lo)
    current = next(starts)
    while current < hi:
        following = next(starts)
        if accrual.awarded == "lastDay":
            found.append(following - ONE_DAY)
        elif accrual.awarded == "firstDayNextPeriod":
            found.append(following)
        else:
            found.append(current)
        current = following
    return found


# ---------------------------------------------------------------------------- cycles


def cycle_awards(accrual: Accrual, allowance: Allowance, start: date, end: date) -> list[date]:
    """The award days of one cycle. Non-recurrent: every period starting in the allowance.
    Recurrent: the awards that fall in [start, end) of periods starting on or after the
    allowance's start, so a closed cycle never changes (a period's award on its last day
    or the day after may fall in the next cycle)."""
    if not allowance.recurrent:
        return award_dates(accrual, start, end)
    lo = max(allowance.start, start - timedelta(days=_LONGEST_PERIOD_DAYS))
    return [day for day in award_dates(accrual, lo, end) if start <= day < end]


def _cycle_bounds(allowance: Allowance, index: int) -> tuple[date, date]:
    start, end = allowance.start, allowance.end
    if index == 0:
        return start, end
    months = (end.year - start.year) * 12 + end.month - start.month
    if start.day == end.day and start.day <= 28 and months > 0:
        return _add_months(start, months * index), _add_months(start, months * (index + 1))
    length = (end - start).days
    return start + timedelta(days=length * index), start + timedelta(days=length * (index + 1))


def cycle_containing(allowance: Allowance, day: date) -> tuple[date, date] | None:
    """The [start, end) of the allowance's cycle that covers `day`, or None."""
    if day < allowance.start or allowance.end <= allowance.start:
        return None
    if not allowance.recurrent:
        last = max(allowance.end, allowance.end_date_extension or allowance.end)
        return (allowance.start, allowance.end) if day < last else None
    index = 0
    while True:
        start, end = _cycle_bounds(allowance, index)
        if start <= day < end:
            return start, end
        index += 1


def ledger(
    accrual: Accrual,
    allowance: Allowance,
    absences: Iterable[tuple[date, Fraction]],
    as_of: date,
) -> Ledger:
    """The allowance's cycles up to the one covering `as_of` (see the module docstring)."""
    if allowance.end <= allowance.start or as_of < allowance.start:
        return Ledger()
    per_day: dict[date, Fraction] = defaultdict(Fraction)
    for day, amount in absences:
        per_day[day] += amount
    days = sorted(per_day)
    cycles: list[Cycle] = []
    carried = Fraction(0)
    index = 0
    while True:
        start, end = _cycle_bounds(allowance, index)
        consume_end = end
        if not allowance.recurrent and allowance.end_date_extension is not None:
            consume_end = max(end, allowance.end_date_extension)
        awards = [day for day in cycle_awards(accrual, allowance, start, end) if day <= as_of]
        awarded = len(awards) * accrual.quantity + (allowance.available if start <= as_of else 0)
        consumed = sum((per_day[day] for day in days if start <= day < consume_end), Fraction(0))
        cycle = Cycle(
            start=start,
            end=end,
            carried_in=carried,
            awarded=awarded,
            correction=allowance.accrued_correction if index == 0 else Fraction(0),
            consumed=consumed,
        )
        if not allowance.recurrent or as_of < end:
            cycles.append(cycle)
            return Ledger(tuple(cycles))
        closing = cycle.closing
        carried = min(closing, allowance.carry_forward_limit) if closing > 0 else closing
        cycles.append(
            Cycle(
                start=start,
                end=end,
                carried_in=cycle.carried_in,
                awarded=awarded,
                correction=cycle.correction,
                consumed=consumed,
                forfeited=closing - carried,
                carried_out=carried,
            )
        )
        index += 1


# ---------------------------------------------------------------------------- absences


def absence_amounts(
    unit: str, records: Sequence[tuple[int, int]], zone: tzinfo
) -> list[tuple[date, Fraction]]:
    """(start_ms, duration_ms) records as (local date, amount) in `unit`: hours, or per day
    the day's absence over an 8-hour working day, at most 1."""
    per_day: dict[date, int] = defaultdict(int)
    for start, duration in records:
        per_day[datetime.fromtimestamp(start / 1000, tz=zone).date()] += duration
    if unit == "hour":
        return [(day, Fraction(total, HOUR_MS)) for day, total in sorted(per_day.items())]
    return [
        (day, min(Fraction(1), Fraction(total, WORKING_DAY_MS)))
        for day, total in sorted(per_day.items())
    ]


def booking_horizon(accrual: Accrual, allowance: Allowance, today: date, day: date) -> date:
    """The as-of date an absence on `day` is checked at: what is awarded by then (or by
    the end of its cycle when the accrual allows booking ahead) may be used."""
    horizon = max(today, day)
    if accrual.allow_negative_booking:
        bounds = cycle_containing(allowance, day)
        if bounds is not None:
            horizon = max(horizon, bounds[1] - ONE_DAY)
    return horizon


def overdraws(
    accrual: Accrual,
    allowance: Allowance,
    before: Sequence[tuple[date, Fraction]],
    after: Sequence[tuple[date, Fraction]],
    today: date,
    day: date,
) -> Fraction | None:
    """The balance a change would leave when it takes the allowance below zero (and lower
    than it was) and the allowance does not allow a negative balance; else None."""
    if allowance.allow_negative_balance or cycle_containing(allowance, day) is None:
        return None
    horizon = booking_horizon(accrual, allowance, today, day)
    balance_after = ledger(accrual, allowance, after, horizon).balance
    if balance_after >= 0:
        return None
    balance_before = ledger(accrual, allowance, before, horizon).balance
    return balance_after if balance_after < balance_before else None
