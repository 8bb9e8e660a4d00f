"""Amounts of priced time entries, summed exactly (Decimal in the currency's smallest unit,
never floats) per report row.

- Hourly: hours x rate, for each billable entry.
- Daily: the rate once per person and day (and rate and split row), charged to the day's first
  entry that resolves to it.
- Fixed fee: once per repeat window (once in all without a repeat), charged to the window's
  first entry that resolves to it; windows start every `frequency` days, weeks, months or
  years from the From date, and none starts after the repeat's end date.
- Non-billable (the method, a split row, or the entry's own flag): no billing, not billable
  hours. Costs ignore billability.
Amounts in another currency than the report's are left out and their currencies listed.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal

from service.rates.rules import METHOD_DAILY, METHOD_FIXED, METHOD_HOURLY, RateFacts, Resolution

MS_PER_HOUR = Decimal(3_600_000)
ZERO = Decimal(0)


@dataclass(frozen=True)
class PricedEntry:
    group: Hashable
    person_id: str
    day: date
    start_ms: int
    duration_ms: int
    non_billable: bool
    billing: Resolution | None
    cost: Resolution | None


@dataclass
class Totals:
    ms: int = 0
    billable_ms: int = 0
    hourly_billing: Decimal = ZERO
    daily_billing: Decimal = ZERO
    fixed_billing: Decimal = ZERO
    hourly_cost: Decimal = ZERO
    daily_cost: Decimal = ZERO
    fixed_cost: Decimal = ZERO

    @property
    def hours(self) -> Decimal:
        return Decimal(self.ms) / MS_PER_HOUR

    @property
    def billable_hours(self) -> Decimal:
        return Decimal(self.billable_ms) / MS_PER_HOUR

    @property
    def billing(self) -> Decimal:
        return self.hourly_billing + self.daily_billing + self.fixed_billing

    @property
    def cost(self) -> Decimal:
        return self.hourly_cost + self.daily_cost + self.fixed_cost

    @property
    def margin(self) -> Decimal:
        return self.billing - self.cost

    @property
    def margin_percent(self) -> Decimal:
        return self.margin * 100 / self.billing if self.billing else ZERO

    @property
    def billable_percentage(self) -> int:
        if not self.ms:
            return 0
        return int((Decimal(self.billable_ms) * 100 / Decimal(self.ms)).to_integral_value())


@dataclass
class Report:
    rows: dict[Hashable, Totals] = field(default_factory=dict)
    other_currencies: set[str] = field(default_factory=set)


def _months(start: date, day: date) -> int:
    months = (day.year - start.year) * 12 + day.month - start.month
    return months - 1 if day.day < start.day else months


def _add_months(start: date, months: int) -> date:
    index = start.month - 1 + months
    year, month = start.year + index // 12, index % 12 + 1
    for day in (start.day, 30, 29, 28):
        try:
            return date(year, month, day)
        except ValueError:
            continue
    raise AssertionError("unreachable")


def fee_window(rate: RateFacts, day: date) -> int | None:
    """Which fee of a fixed rate covers `day` (0, 1, ...), or None when no fee does."""
    if day < rate.start_day:
        return None
    if not rate.repeat_enabled:
        return 0
    every = max(1, rate.repeat_frequency)
    occurrence = rate.repeat_occurrence
    if occurrence == "day":
        index = (day - rate.start_day).days // every
        window_start = rate.start_day + timedelta(days=index * every)
    elif occurrence == "week":
        index = (day - rate.start_day).days // (7 * every)
        window_start = rate.start_day + timedelta(days=index * every * 7)
    else:
        per = 12 if occurrence == "year" else 1
        index = _months(rate.start_day, day) // (per * every)
        window_start = _add_months(rate.start_day, index * every * per)
    if rate.repeat_end_day is not None and window_start > rate.repeat_end_day:
        return None
    return index


def _amount(
    resolution: Resolution, entry: PricedEntry, charged: set[Hashable]
) -> tuple[str, Decimal]:
    """(method, amount) of one entry under one resolution; daily and fixed once per key."""
    value = Decimal(resolution.value)
    rate = resolution.rate
    if resolution.method == METHOD_HOURLY:
        return METHOD_HOURLY, Decimal(entry.duration_ms) * value / MS_PER_HOUR
    if resolution.method == METHOD_DAILY:
        key: Hashable = ("daily", rate.id, resolution.split_entity, entry.person_id, entry.day)
    elif resolution.method == METHOD_FIXED:
        window = fee_window(rate, entry.day)
        if window is None:
            return METHOD_FIXED, ZERO
        key = ("fixed", rate.id, window)
    else:
        return resolution.method, ZERO
    if key in charged:
        return resolution.method, ZERO
    charged.add(key)
    return resolution.method, value


def summarise(entries: Iterable[PricedEntry], currency: str) -> Report:
    """Totals per group, in the order groups first appear (entries are taken by start)."""
    report = Report()
    charged_billing: set[Hashable] = set()
    charged_cost: set[Hashable] = set()
    for entry in sorted(entries, key=lambda e: e.start_ms):
        totals = report.rows.setdefault(entry.group, Totals())
        totals.ms += entry.duration_ms
        billing = entry.billing
        billable = not entry.non_billable and not (billing is not None and billing.non_billable)
        if billable:
            totals.billable_ms += entry.duration_ms
        if billable and billing is not None:
            if billing.currency != currency:
                report.other_currencies.add(billing.currency)
            else:
                method, value = _amount(billing, entry, charged_billing)
                if method == METHOD_HOURLY:
                    totals.hourly_billing += value
                elif method == METHOD_DAILY:
                    totals.daily_billing += value
                else:
                    totals.fixed_billing += value
        cost = entry.cost
        if cost is not None and not cost.non_billable:
            if cost.currency != currency:
                report.other_currencies.add(cost.currency)
            else:
                method, value = _amount(cost, entry, charged_cost)
                if method == METHOD_HOURLY:
                    totals.hourly_cost += value
                elif method == METHOD_DAILY:
                    totals.daily_cost += value
                else:
                    totals.fixed_cost += value
    return report
