"""Auto-submit: a period of the person's own timesheet (their `periodicity`, from their
`firstDayOfWeek`, in their time zone: `plumbing/periods.py`, the periods `submitTimesheet`
accepts) that holds entries and was never submitted is submitted by the service N days after
it ends (N local days: at the local midnight N days after the period's last day), when the
setting `autoSubmit` (N, account / tag / person, the most specific winning) is set. The
Journal says Auto-submitted. Run by the webhook worker each time it wakes.

Idempotent: each period is submitted in its own transaction that re-reads the timesheet
under its row lock (or creates it against the unique period), so a retry or a second process
running the same sweep finds it submitted and leaves it; a rejected or partly submitted
period is never submitted again automatically.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import String, cast, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from plumbing import periods
from plumbing.db import unit_of_work
from service.errors import ServiceError
from service.models import Organisation, Person, Tag, TimeRecord
from service.organisation import AUTO_SUBMIT, resolve
from service.timesheets.actor import Actor
from service.timesheets.models import STATUS_DRAFT, Timesheet
from service.timesheets.period_rules import PeriodSettings, period_settings
from service.timesheets.scheduled_time_rules import check_scheduled_time
from service.timesheets.submit import submit

DAY_MS = 86_400_000
# The longest period (a month) and a margin: how far before "now - N days" a period's
# entries may start and the period still be due.
LONGEST_PERIOD_DAYS = 32
# A period that became due longer ago than this is left alone (a service that was down that
# long, or a setting lowered, does not submit old periods at once).
CATCH_UP_DAYS = 14


def whole_days(days: object) -> int | None:
    """Pure: N >= 0, else None (off)."""
    if not isinstance(days, int) or isinstance(days, bool) or days < 0:
        return None
    return days


def due_at(period_end_ms: int, days: int, zone: ZoneInfo) -> int:
    """Pure: the local midnight `days` days after the period's end."""
    return periods.local_midnight_ms(periods.local_day(period_end_ms, zone)
                                     + timedelta(days=days), zone)


def auto_submit_due(days: object, period_end_ms: int, now_ms: int,
                    zone: ZoneInfo | None = None) -> bool:
    """Pure: N >= 0 whole (local) days have passed since the period ended."""
    n = whole_days(days)
    if n is None:
        return False
    return now_ms >= due_at(period_end_ms, n, zone or ZoneInfo("UTC"))


def due_periods(starts: Iterable[int], settings: PeriodSettings, days: int, now_ms: int
                ) -> list[tuple[int, int]]:
    """Pure: the person's periods holding these entry starts that are due now (ended N days
    ago, not more than CATCH_UP_DAYS after that), oldest first."""
    found: set[tuple[int, int]] = set()
    for start in starts:
        period = periods.period_at(settings.kind, start, settings.zone, settings.first_day)
        due = due_at(period[1], days, settings.zone)
        if due <= now_ms < due + CATCH_UP_DAYS * DAY_MS:
            found.add(period)
    return sorted(found)


async def organisations_using_auto_submit(session: AsyncSession) -> set[str]:
    """Organisations where the account, a tag or a person sets autoSubmit (a cheap text match
    on the settings JSON; the setting itself is resolved per person afterwards)."""
    needle = f'"{AUTO_SUBMIT}"'
    found: set[str] = set(
        await session.scalars(
            select(Organisation.id).where(cast(Organisation.settings, String).contains(needle))
        )
    )
    for column, settings in ((Tag.organisation_id, Tag.settings),
                             (Person.organisation_id, Person.settings)):
        found.update(
            await session.scalars(select(column).where(cast(settings, String).contains(needle)))
        )
    return found


async def _candidates(session: AsyncSession, organisation: Organisation, now_ms: int
                      ) -> list[tuple[str, int, int]]:
    """(person id, start, end) of the organisation's periods due for auto-submission."""
    people = list(await session.scalars(select(Person).where(
        Person.organisation_id == organisation.id, Person.archived.is_(False))))
    plans: dict[str, tuple[PeriodSettings, int]] = {}
    for person in people:
        days = whole_days((await resolve(session, organisation, person,
                                             AUTO_SUBMIT)).value)
        if days is not None:
            plans[person.id] = (await period_settings(session, organisation, person), days)
    if not plans:
        return []
    longest = max(days for _, days in plans.values())
    since = now_ms - (longest + LONGEST_PERIOD_DAYS + CATCH_UP_DAYS + 2) * DAY_MS
    starts: dict[str, set[int]] = {}
    rows = await session.execute(
        select(TimeRecord.person_id, TimeRecord.start_ms).distinct().where(
            TimeRecord.organisation_id == organisation.id,
            TimeRecord.person_id.in_(sorted(plans)),
            TimeRecord.start_ms >= since, TimeRecord.start_ms < now_ms))
    for person_id, start in rows:
        starts.setdefault(person_id, set()).add(start)
    taken = set((await session.execute(
        select(Timesheet.person_id, Timesheet.start_ms, Timesheet.end_ms).where(
            Timesheet.organisation_id == organisation.id,
            Timesheet.person_id.in_(sorted(starts)), Timesheet.end_ms > since,
            Timesheet.status != STATUS_DRAFT))).tuples())
    found: list[tuple[str, int, int]] = []
    for person_id, person_starts in sorted(starts.items()):
        settings, days = plans[person_id]
        for start, end in due_periods(person_starts, settings, days, now_ms):
            if not any(p == person_id and s < end and e > start for p, s, e in taken):
                found.append((person_id, start, end))
    return found


async def auto_submit(sessions: async_sessionmaker[AsyncSession], now_ms: int) -> int:
    """Submit every due period; returns how many were submitted."""
    async with sessions() as session:
        org_ids = await organisations_using_auto_submit(session)
        candidates = []
        for org_id in sorted(org_ids):
            organisation = await session.get(Organisation, org_id)
            if organisation is not None:
                candidates += [(org_id, *c) for c in
                               await _candidates(session, organisation, now_ms)]
    done = 0
    for org_id, person_id, start, end in candidates:
        async with unit_of_work(sessions) as session:
            if await _submit_one(session, org_id, person_id, start, end, now_ms):
                done += 1
    return done


async def _submit_one(session: AsyncSession, org_id: str, person_id: str, start: int, end: int,
                      now_ms: int) -> bool:
    organisation = await session.get(Organisation, org_id)
    owner = await session.get(Person, person_id)
    if organisation is None or owner is None or owner.archived:
        return False
    existing = (await session.scalars(select(Timesheet.id).where(
        Timesheet.organisation_id == org_id, Timesheet.person_id == person_id,
        Timesheet.start_ms < end, Timesheet.end_ms > start,
        Timesheet.status != STATUS_DRAFT))).first()
    if existing is not None:
        return False
    try:
        await check_scheduled_time(session, organisation, owner, start, end)
        await submit(Actor(session, organisation, None, now_ms), owner, start, end, auto=True)
    except ServiceError:  # short of its scheduled time, or submitted meanwhile (another
        # process, a person): left as it is
        return False
    return True
