"""The demo organisation's work schedule (Monday to Friday, 8 hours, from the start of its
history) and public holidays (Germany, in English)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from service.models import Organisation
from service.organisation import keyed_settings as cfg
from service.plannings.models import TARGET_ORGANISATION, ScheduleTimelineEntry, ScheduleType
from service.plannings.schedule_plan import PUBLIC_HOLIDAYS
from service.plannings.schedule_rules import DEFAULT_WEEK

HOUR_MS = 3_600_000
NINE, TWELVE, ONE, SIX = 9 * HOUR_MS, 12 * HOUR_MS, 13 * HOUR_MS, 18 * HOUR_MS


async def seed_schedule(session: AsyncSession, organisation: Organisation,
                        monday_ms: int) -> None:
    """`monday_ms`: a local Monday midnight, day 0 of the weekly cycle."""
    days = [day.as_json() for day in DEFAULT_WEEK]
    for day in days[:5]:
        day["timePairs"] = [[NINE, TWELVE], [ONE, SIX]]
    days[4]["wfh"] = True
    schedule = ScheduleType(organisation_id=organisation.id, name="Office week (Mon-Fri 8h)",
                            color="#0b6e4f", archived=False, calendar_start_ms=monday_ms,
                            length=7, days=days)
    session.add(schedule)
    await session.flush()
    session.add(ScheduleTimelineEntry(organisation_id=organisation.id,
                                      schedule_type_id=schedule.id,
                                      target_kind=TARGET_ORGANISATION,
                                      target_id=organisation.id, start_ms=None))
    cfg.set_value(organisation, PUBLIC_HOLIDAYS, {"code": "DE", "lang": "en_US"})
