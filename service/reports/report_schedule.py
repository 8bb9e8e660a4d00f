"""runInlineReport's schedule quantities: business hours, what is left of them, overtime,
recorded days and the billing ratio, from each person's planned days
(service/plannings/schedule_plan.py:
their schedules minus public holidays) over the report's period.

The pure part (`schedule_totals`) takes one person's recorded time per local day in a row and
their planned days; the adapter (`plans`) reads the planned days of the report's persons.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from service.errors import BadInput
from service.graphql.context import RequestContext
from service.models import Person
from service.organisation import person_zone
from service.plannings import DEFAULT_DAY_MS, MAX_DAYS, PlannedDay, plan_person

# The options that need the persons' planned days; without any, those quantities are 0 and
# `days` counts the default 8-hour day.
SCHEDULE_OPTIONS = ("countScheduleDays", "overtimeDaily", "overtimePeriod", "businessHours",
                    "businessHoursRemaining", "billingRatio")
HOUR_MS = Decimal(3_600_000)


@dataclass
class ScheduleTotals:
    business_ms: int = 0
    recorded_ms: int = 0
    daily_overtime_ms: int = 0
    days: Decimal = Decimal(0)

    def add(self, other: ScheduleTotals) -> None:
        self.business_ms += other.business_ms
        self.recorded_ms += other.recorded_ms
        self.daily_overtime_ms += other.daily_overtime_ms
        self.days += other.days


def schedule_totals(recorded: Mapping[date, int], planned: Sequence[PlannedDay] | None,
                    count_schedule_days: bool) -> ScheduleTotals:
    """One person's figures in one row. `planned` None: no schedule was asked for."""
    total = sum(recorded.values())
    if planned is None:
        return ScheduleTotals(recorded_ms=total, days=Decimal(total) / DEFAULT_DAY_MS)
    length = {p.day: p.duration for p in planned}
    over = sum(max(0, ms - length.get(day, 0)) for day, ms in recorded.items())
    if count_schedule_days:
        days = sum((Decimal(ms) / (length.get(day) or DEFAULT_DAY_MS)
                    for day, ms in recorded.items()), Decimal(0))
    else:
        days = Decimal(total) / DEFAULT_DAY_MS
    return ScheduleTotals(sum(p.duration for p in planned), total, over, days)


def quantities(totals: ScheduleTotals, billable_ms: int,
               options: Mapping[str, Any]) -> dict[str, Any]:
    """The SvcReportQuantities fields of the schedule (each only when its option asks)."""
    business = Decimal(totals.business_ms) / HOUR_MS
    hours = Decimal(totals.recorded_ms) / HOUR_MS
    balance = hours - business
    period_on = bool(options.get("overtimePeriod"))
    daily_on = bool(options.get("overtimeDaily"))
    ratio = (billable_ms * 100 // totals.business_ms
             if options.get("billingRatio") and totals.business_ms else 0)
    return {
        "days": float(totals.days.quantize(Decimal("0.0001"))),
        "overtime": {
            "daily": float(Decimal(totals.daily_overtime_ms) / HOUR_MS) if daily_on else 0.0,
            "period": float(max(Decimal(0), balance)) if period_on else 0.0,
            "balance": float(balance) if period_on or daily_on else 0.0,
        },
        "businessHours": float(business) if options.get("businessHours") else 0.0,
        "businessHoursRemaining": (float(max(Decimal(0), -balance))
                                   if options.get("businessHoursRemaining") else 0.0),
        "billingRatio": ratio,
    }


def wanted(options: Mapping[str, Any]) -> bool:
    return any(options.get(key) for key in SCHEDULE_OPTIONS)


async def plans(context: RequestContext, persons: Sequence[Person], start_ms: int,
                end_ms: int) -> dict[str, tuple[ZoneInfo, list[PlannedDay]]]:
    """Each person's time zone and planned days over [start, end)."""
    found: dict[str, tuple[ZoneInfo, list[PlannedDay]]] = {}
    for person in persons:
        zone = await person_zone(context.session, context.organisation, person)
        try:
            days = await plan_person(context.session, context.organisation, person,
                                     start_ms, end_ms)
        except BadInput:
            raise BadInput("period", f"schedule quantities cover at most {MAX_DAYS} days"
                           ) from None
        found[person.id] = (zone, days)
    return found


def local_day(start_ms: int, zone: ZoneInfo) -> date:
    return datetime.fromtimestamp(start_ms / 1000, UTC).astimezone(zone).date()
