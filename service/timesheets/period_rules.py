"""The settings that shape a timesheet's period, applied: `periodicity` and
`allowPartialPeriodSubmit` decide what `submitTimesheet` accepts, `turnOffPeriodAfter` closes
a period to new time N days after it ends. The periods themselves are `plumbing/periods.py`
(pure, in the person's time zone and from their `firstDayOfWeek`).

Submitting holds to the period once `periodicity` or `allowPartialPeriodSubmit` is set
somewhere for the person (account, tag or person): an account that never chose a period
accepts any period, as before (the API names its period); auto-submission submits the
person's period (`service/timesheets/autosubmit.py`). `check_period_open` is a separate
check for the entry-rule pipeline (`service/time_records/entry_settings.py`) to call on every write
of a
record's start.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from zoneinfo import ZoneInfo

from sqlalchemy.ext.asyncio import AsyncSession

from plumbing import periods
from service.errors import RuleViolation
from service.models import Organisation, Person, Project
from service.organisation import (
    BY_NAME,
    LOCALISATION,
    TIME_SETTINGS,
    Resolved,
    for_person,
    own,
    person_zone,
    reader,
)


async def _value(session: AsyncSession, organisation: Organisation, person: Person, group: str,
                 name: str) -> Resolved:
    setting = BY_NAME[(group, name)]
    return await for_person(session, organisation, person, reader(setting), setting.default,
                            setting.ties)


@dataclass(frozen=True)
class PeriodSettings:
    periodicity: Resolved
    partial: Resolved
    zone: ZoneInfo
    first_day: int

    @property
    def kind(self) -> str:
        return periods.known(self.periodicity.value)


async def period_settings(session: AsyncSession, organisation: Organisation,
                          person: Person) -> PeriodSettings:
    """The person's period settings (from the rows already loaded: the tags are remembered)."""
    return PeriodSettings(
        await _value(session, organisation, person, TIME_SETTINGS, "periodicity"),
        await _value(session, organisation, person, TIME_SETTINGS, "allowPartialPeriodSubmit"),
        await person_zone(session, organisation, person),
        (await _value(session, organisation, person, LOCALISATION, "firstDayOfWeek")).value,
    )


def source(resolved: Resolved) -> str:
    if not resolved.path:
        return "the default"
    where = resolved.path[0]
    return f"{where['collection'].rstrip('s')} {where['name']}"


def period_to_submit(settings: PeriodSettings, start_ms: int, end_ms: int) -> int:
    """The end to submit: RuleViolation naming `periodicity` when [start, end) is not the
    person's period (or, with `allowPartialPeriodSubmit`, a part of one); else the end, a day's
    last millisecond read as the midnight after it, so that a period's last millisecond and the
    next period's first name one timesheet. Without a setting the API's period is taken as
    given."""
    if not settings.periodicity.path and not settings.partial.path:
        return end_ms
    end_ms = periods.exclusive_end(end_ms, settings.zone)
    partial = bool(settings.partial.value)
    problem = periods.submit_problem(settings.kind, partial, start_ms, end_ms, settings.zone,
                                     settings.first_day)
    if problem is not None:
        allowed = "allowed" if partial else "not allowed"
        raise RuleViolation(
            f"The timesheet period is {settings.kind} (periodicity of "
            f"{source(settings.periodicity)}; a part of a period is {allowed}: "
            f"allowPartialPeriodSubmit of {source(settings.partial)}): {problem}")
    return end_ms


def check_open(turn_off: Resolved, settings: PeriodSettings, start_ms: int,
               now_ms: int) -> None:
    """RuleViolation naming `turnOffPeriodAfter` when the period holding `start_ms` ended more
    than the setting's days ago (0: the period closes when it ends)."""
    days = turn_off.value
    if days is None:
        return
    closed = periods.closed_since(settings.kind, start_ms, settings.zone, settings.first_day,
                                  days)
    if now_ms < closed:
        return
    zone, kind = settings.zone, settings.kind
    start, end = periods.period_at(kind, start_ms, zone, settings.first_day)
    last = periods.local_day(end, zone) - timedelta(days=1)
    # The earliest open period holds the day `days` days before today.
    earliest = periods.local_day(now_ms, zone) - timedelta(days=days)
    open_from = periods.period_of(kind, earliest, settings.first_day)[0]
    raise RuleViolation(
        f"The {periods.NOUNS[kind]} of {periods.dates_label(start, end, zone)} is closed "
        f"(turnOffPeriodAfter of {source(turn_off)}: a period takes no more time {days} days "
        f"after it ends; this one ended {last.isoformat()}): record time from "
        f"{open_from.isoformat()} on")


async def check_period_open(session: AsyncSession, organisation: Organisation, person: Person,
                            start_ms: int, now_ms: int, projects: Sequence[Project] = ()
                            ) -> None:
    """The entry pipeline's step: new or moved time must lie in a period still open. The
    value is the first of the entry's projects that sets `turnOffPeriodAfter` (a project
    closes its periods sooner or later than its people's), else the person's. Reads the
    period settings (always the person's: their periods) only when a value applies."""
    setting = BY_NAME[(TIME_SETTINGS, "turnOffPeriodAfter")]
    turn_off = next((found for found in (own(p, "project", reader(setting)) for p in projects)
                     if found is not None), None) or \
        await _value(session, organisation, person, TIME_SETTINGS, "turnOffPeriodAfter")
    if turn_off.value is None:
        return
    check_open(turn_off, await period_settings(session, organisation, person), start_ms, now_ms)
