"""`requireScheduledTimeDaily` and `requireScheduledTimePeriod` at submitTimesheet: a
timesheet is submitted only when each working day of it holds its scheduled time (daily), or
the period as a whole holds the period's scheduled time (period). The scheduled time is the
person's work schedule minus public holidays (`service/plannings/schedule_plan.py`), the days
counted
in the person's time zone; the time recorded is every record (worked time and absences)
starting on the day. Both settings are read for the person (person > deepest tag > account).

`shortfalls` and `refusal` are pure; `check_scheduled_time` is the adapter submitTimesheet
and auto-submission call. The refusal names the setting, where it is set and the shortfall:
``Tue 24 Nov has 6h of 8h scheduled``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from plumbing import periods
from service.errors import RuleViolation
from service.models import Organisation, Person, TimeRecord
from service.organisation import BY_NAME, TIME_SETTINGS, Resolved, for_person, person_zone, reader
from service.plannings import PlannedDay, plan_person

DAILY = "requireScheduledTimeDaily"
PERIOD = "requireScheduledTimePeriod"
SHOWN_DAYS = 3  # the days a refusal names; the rest are counted


@dataclass(frozen=True)
class Shortfall:
    first: date
    last: date
    recorded_ms: int
    scheduled_ms: int

    @property
    def text(self) -> str:
        when = day_label(self.first) if self.first == self.last else \
            f"{day_label(self.first)} to {day_label(self.last)}"
        return f"{when} has {hours(self.recorded_ms)} of {hours(self.scheduled_ms)} scheduled"


def day_label(day: date) -> str:
    return f"{day.strftime('%a')} {day.day} {day.strftime('%b')}"


def hours(ms: int) -> str:
    """6h, 7h 30m, 45m."""
    minutes = ms // 60_000
    whole, rest = divmod(minutes, 60)
    if not rest:
        return f"{whole}h"
    return f"{whole}h {rest}m" if whole else f"{rest}m"


def shortfalls(planned: Sequence[PlannedDay], recorded: dict[date, int], *, daily: bool,
               period: bool) -> tuple[list[Shortfall], Shortfall | None]:
    """Pure: (the working days short of their scheduled time, when `daily`; the period short
    of its scheduled time, when `period`)."""
    days = [Shortfall(d.day, d.day, recorded.get(d.day, 0), d.duration) for d in planned
            if d.working and recorded.get(d.day, 0) < d.duration] if daily else []
    whole = None
    if period and planned:
        scheduled = sum(d.duration for d in planned)
        total = sum(ms for day, ms in recorded.items()
                    if planned[0].day <= day <= planned[-1].day)
        if total < scheduled:
            whole = Shortfall(planned[0].day, planned[-1].day, total, scheduled)
    return days, whole


def source(resolved: Resolved) -> str:
    if not resolved.path:
        return "the default"
    where = resolved.path[0]
    return f"{where['collection'].rstrip('s')} {where['name']}"


def refusal(daily: Resolved, period: Resolved, days: list[Shortfall],
            whole: Shortfall | None) -> str | None:
    """Pure: the message naming the setting and the shortfall, or None."""
    if days:
        named = "; ".join(s.text for s in days[:SHOWN_DAYS])
        more = len(days) - SHOWN_DAYS
        if more > 0:
            named += f"; and {more} more working day{'s' if more > 1 else ''}"
        return (f"The timesheet settings require each working day's scheduled time "
                f"({DAILY} of {source(daily)}): {named}")
    if whole is not None:
        return (f"The timesheet settings require the period's scheduled time "
                f"({PERIOD} of {source(period)}): {whole.text}")
    return None


async def _setting(session: AsyncSession, organisation: Organisation, person: Person,
                   name: str) -> Resolved:
    setting = BY_NAME[(TIME_SETTINGS, name)]
    return await for_person(session, organisation, person, reader(setting), setting.default)


def recorded_by_day(rows: Iterable[tuple[int, int]], zone: ZoneInfo) -> dict[date, int]:
    """Pure: the time recorded on each local day (by each record's start)."""
    found: dict[date, int] = {}
    for start, duration in rows:
        day = periods.local_day(start, zone)
        found[day] = found.get(day, 0) + duration
    return found


async def check_scheduled_time(session: AsyncSession, organisation: Organisation,
                               person: Person, start_ms: int, end_ms: int) -> None:
    """RuleViolation when a requirement set for the person is not met by [start, end)."""
    daily = await _setting(session, organisation, person, DAILY)
    period = await _setting(session, organisation, person, PERIOD)
    if not daily.value and not period.value:
        return
    planned = await plan_person(session, organisation, person, start_ms, end_ms)
    zone = await person_zone(session, organisation, person)
    rows = await session.execute(select(TimeRecord.start_ms, TimeRecord.duration_ms).where(
        TimeRecord.organisation_id == organisation.id, TimeRecord.person_id == person.id,
        TimeRecord.start_ms >= start_ms, TimeRecord.start_ms < end_ms))
    recorded = recorded_by_day(rows.tuples(), zone)
    days, whole = shortfalls(planned, recorded, daily=bool(daily.value),
                             period=bool(period.value))
    refused = refusal(daily, period, days, whole)
    if refused is not None:
        raise RuleViolation(refused)
