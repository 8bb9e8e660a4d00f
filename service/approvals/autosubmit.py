"""Auto-submit: a week (Monday 00:00 UTC to the next Monday) that holds entries and was never
submitted is submitted by the service N days after it ends, when the setting `autoSubmit`
(N, account / tag / person, the most specific winning) is set. The Journal says
Auto-submitted. Run by the webhook worker each time it wakes, looking back LOOKBACK_WEEKS."""

from __future__ import annotations

from sqlalchemy import String, cast, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from plumbing.db import unit_of_work
from service.approvals import settings as cfg
from service.approvals.actor import Actor
from service.approvals.submit import submit
from service.errors import ServiceError
from service.models import Organisation, Person, Tag, TimeRecord
from service.models.approval import STATUS_DRAFT, Timesheet

DAY_MS = 86_400_000
WEEK_MS = 7 * DAY_MS
MONDAY_MS = 4 * DAY_MS  # 1970-01-05, a Monday
LOOKBACK_WEEKS = 6


def week_of(moment_ms: int) -> tuple[int, int]:
    """Pure: the UTC Monday-to-Monday week holding the moment."""
    start = (moment_ms - MONDAY_MS) // WEEK_MS * WEEK_MS + MONDAY_MS
    return start, start + WEEK_MS


def auto_submit_due(days: object, week_end_ms: int, now_ms: int) -> bool:
    """Pure: N >= 0 whole days have passed since the week ended."""
    if not isinstance(days, int) or isinstance(days, bool) or days < 0:
        return False
    return now_ms >= week_end_ms + days * DAY_MS


async def organisations_using_auto_submit(session: AsyncSession) -> set[str]:
    """Organisations where the account, a tag or a person sets autoSubmit (a cheap text match
    on the settings JSON; the setting itself is resolved per person afterwards)."""
    needle = f'"{cfg.AUTO_SUBMIT}"'
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


async def auto_submit(sessions: async_sessionmaker[AsyncSession], now_ms: int) -> int:
    """Submit every due week; returns how many were submitted."""
    since = week_of(now_ms)[0] - LOOKBACK_WEEKS * WEEK_MS
    async with sessions() as session:
        org_ids = await organisations_using_auto_submit(session)
        if not org_ids:
            return 0
        rows = await session.execute(
            select(TimeRecord.organisation_id, TimeRecord.person_id, TimeRecord.start_ms).where(
                TimeRecord.organisation_id.in_(sorted(org_ids)),
                TimeRecord.start_ms >= since,
                TimeRecord.start_ms < week_of(now_ms)[0],
            )
        )
        candidates = sorted({(org, person, week_of(start)) for org, person, start in rows})
    done = 0
    for org_id, person_id, (start, end) in candidates:
        async with unit_of_work(sessions) as session:
            organisation = await session.get(Organisation, org_id)
            owner = await session.get(Person, person_id)
            if organisation is None or owner is None or owner.archived:
                continue
            days = (await cfg.resolve(session, organisation, owner, cfg.AUTO_SUBMIT)).value
            if not auto_submit_due(days, end, now_ms):
                continue
            existing = (
                await session.scalars(
                    select(Timesheet.id).where(
                        Timesheet.organisation_id == org_id,
                        Timesheet.person_id == person_id,
                        Timesheet.start_ms < end,
                        Timesheet.end_ms > start,
                        Timesheet.status != STATUS_DRAFT,
                    )
                )
            ).first()
            if existing is not None:
                continue
            try:
                await submit(Actor(session, organisation, None, now_ms), owner, start, end,
                             auto=True)
            except ServiceError:
                continue
            done += 1
    return done
