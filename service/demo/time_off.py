"""The demo organisation's time-off allowance: Vacation accrues 1.5 days a month on top
of 10 days a year, for everyone, recurring each calendar year, with up to 5 days carried
forward."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from sqlalchemy.ext.asyncio import AsyncSession

from service.absences.models import AbsenceAccrual, AbsenceQuota
from service.models import AbsenceType


def _year_start_ms(year: int, zone: ZoneInfo) -> int:
    return int(dt.datetime(year, 1, 1, tzinfo=zone).timestamp() * 1000)


def seed_time_off(
    session: AsyncSession, org_id: str, vacation: AbsenceType, now_ms: int, zone: ZoneInfo
) -> None:
    year = dt.datetime.fromtimestamp(now_ms / 1000, tz=zone).year
    session.add_all([
        AbsenceAccrual(
            organisation_id=org_id, absence_type_id=vacation.id, is_enabled=True,
            periodicity="monthly", period_start_day=1, awarded="firstDay", quantity=1.5,
            allow_negative_booking=False,
        ),
        AbsenceQuota(
            organisation_id=org_id, absence_type_id=vacation.id,
            start_ms=_year_start_ms(year, zone), end_ms=_year_start_ms(year + 1, zone),
            available=10, carry_forward_limit=5, accrued_correction=0,
            allow_negative_balance=False, recurrent=True,
        ),
    ])
