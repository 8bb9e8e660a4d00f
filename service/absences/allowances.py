"""Time-off allowances in the database: which allowances apply to a person, their ledgers
(through the pure rules of service/absences/time_off_rules.py), and the check that refuses a time
record that would take an allowance below zero.

Which allowances apply, per absence type, most specific level first: the person's own;
else those of the person's deepest tags that have one for the type (archived tags
ignored); else the organisation's.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from fractions import Fraction
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from service.absences.models import AbsenceAccrual, AbsenceQuota
from service.absences.time_off_rules import (
    Accrual,
    Allowance,
    Ledger,
    absence_amounts,
    cycle_containing,
    exact,
    ledger,
    overdraws,
)
from service.access import person_tags
from service.errors import RuleViolation
from service.models import AbsenceType, Organisation, Person, TimeRecord
from service.organisation import person_zone

DAY_MS = 86_400_000


def local_day(ms: int, zone: tzinfo) -> date:
    return datetime.fromtimestamp(ms / 1000, tz=zone).date()


def day_start_ms(day: date, zone: tzinfo) -> int:
    return int(datetime(day.year, day.month, day.day, tzinfo=zone).timestamp() * 1000)


def accrual_of(row: AbsenceAccrual | None) -> Accrual:
    if row is None:
        return Accrual()
    return Accrual(
        enabled=row.is_enabled,
        periodicity=row.periodicity,
        period_start_day=row.period_start_day,
        awarded=row.awarded,
        quantity=exact(row.quantity),
        allow_negative_booking=row.allow_negative_booking,
    )


def allowance_of(quota: AbsenceQuota, zone: tzinfo) -> Allowance:
    """The quota's [startTime, endTime) as local dates (end exclusive, a partial last day
    counting whole)."""
    extension = quota.end_date_extension_ms
    return Allowance(
        start=local_day(quota.start_ms, zone),
        end=local_day(quota.end_ms - 1, zone) + timedelta(days=1),
        available=Fraction(quota.available),
        end_date_extension=(
            local_day(extension - 1, zone) + timedelta(days=1) if extension is not None else None
        ),
        carry_forward_limit=Fraction(quota.carry_forward_limit),
        accrued_correction=Fraction(quota.accrued_correction),
        allow_negative_balance=quota.allow_negative_balance,
        recurrent=quota.recurrent,
    )


async def accrual_row(
    session: AsyncSession, org_id: str, type_id: str
) -> AbsenceAccrual | None:
    return await session.scalar(
        select(AbsenceAccrual).where(AbsenceAccrual.organisation_id == org_id,
                                     AbsenceAccrual.absence_type_id == type_id)
    )


@dataclass(frozen=True)
class Applicable:
    quotas: list[AbsenceQuota]
    path: list[dict[str, str]]


def _path(entity: Any, collection: str) -> dict[str, str]:
    return {"id": entity.id, "collection": collection, "name": entity.name}


async def applicable_quotas(
    session: AsyncSession,
    organisation: Organisation,
    person: Person,
    type_ids: Collection[str] | None = None,
) -> Applicable:
    """The allowances that apply to the person (per type, the most specific level)."""
    tags = [tag for tag in await person_tags(session, organisation.id, person.id)
            if not tag.archived]
    tag_ids = [tag.id for tag in tags]
    statement = select(AbsenceQuota).where(
        AbsenceQuota.organisation_id == organisation.id,
        or_(
            AbsenceQuota.person_id == person.id,
            AbsenceQuota.tag_id.in_(tag_ids) if tag_ids else AbsenceQuota.id.is_(None),
            AbsenceQuota.person_id.is_(None) & AbsenceQuota.tag_id.is_(None),
        ),
    )
    if type_ids is not None:
        statement = statement.where(AbsenceQuota.absence_type_id.in_(list(type_ids)))
    rows = list((await session.scalars(statement.order_by(AbsenceQuota.start_ms,
                                                           AbsenceQuota.id))).unique())
    level = {tag.id: tag.level for tag in tags}
    by_id = {tag.id: tag for tag in tags}
    chosen: list[AbsenceQuota] = []
    sources: dict[str, dict[str, str]] = {}
    for type_id in dict.fromkeys(row.absence_type_id for row in rows):
        of_type = [row for row in rows if row.absence_type_id == type_id]
        own = [row for row in of_type if row.person_id == person.id]
        tagged = [row for row in of_type if row.tag_id is not None]
        if own:
            chosen += own
            sources.setdefault(person.id, _path(person, "persons"))
        elif tagged:
            deepest = max(level[row.tag_id] for row in tagged if row.tag_id is not None)
            for row in tagged:
                if row.tag_id is not None and level[row.tag_id] == deepest:
                    chosen.append(row)
                    sources.setdefault(row.tag_id, _path(by_id[row.tag_id], "tags"))
        else:
            chosen += of_type
            sources.setdefault(organisation.id, _path(organisation, "organisations"))
    return Applicable(chosen, list(sources.values()))


async def absence_records(
    session: AsyncSession, org_id: str, person_id: str, type_id: str, since_ms: int
) -> list[tuple[str, int, int]]:
    """(id, start_ms, duration_ms) of the person's records of the type from `since_ms`."""
    rows = await session.execute(
        select(TimeRecord.id, TimeRecord.start_ms, TimeRecord.duration_ms).where(
            TimeRecord.organisation_id == org_id,
            TimeRecord.person_id == person_id,
            TimeRecord.absence_id == type_id,
            TimeRecord.start_ms >= since_ms,
        )
    )
    return [(str(i), int(s), int(d)) for i, s, d in rows]


async def quota_ledger(
    session: AsyncSession,
    organisation: Organisation,
    person: Person,
    quota: AbsenceQuota,
    as_of: date,
) -> tuple[Ledger, Allowance]:
    zone = await person_zone(session, organisation, person)
    allowance = allowance_of(quota, zone)
    records = await absence_records(session, organisation.id, person.id,
                                    quota.absence_type_id, quota.start_ms - DAY_MS)
    amounts = absence_amounts(quota.absence_type.unit, [(s, d) for _i, s, d in records], zone)
    accrual = accrual_of(await accrual_row(session, organisation.id, quota.absence_type_id))
    return ledger(accrual, allowance, amounts, as_of), allowance


def describe(quota: AbsenceQuota, allowance: Allowance) -> str:
    last = allowance.end - timedelta(days=1)
    return (f"the {quota.absence_type.name} allowance {allowance.start.isoformat()} to "
            f"{last.isoformat()} ({quota.id})")


def amount_text(amount: Fraction, unit: str) -> str:
    number = f"{float(amount):.2f}".rstrip("0").rstrip(".")
    return f"{number} {unit}{'' if abs(amount) == 1 else 's'}"


async def check_balance(
    session: AsyncSession,
    organisation: Organisation,
    person: Person,
    absence: AbsenceType,
    changed_ids: Collection[str],
    previous: Sequence[tuple[int, int]],
    now_ms: int,
) -> None:
    """RuleViolation when the (flushed) change to the records `changed_ids` of the
    absence type takes one of the person's allowances below zero; `previous` are the
    (start_ms, duration_ms) those records had before (of the same type)."""
    applicable = await applicable_quotas(session, organisation, person, [absence.id])
    if not applicable.quotas:
        return
    # Concurrent absences against the same allowances take turns (PostgreSQL; SQLite's
    # writers are serialised already): the second one reads the first one's record.
    await session.execute(
        select(AbsenceQuota.id)
        .where(AbsenceQuota.id.in_(sorted(quota.id for quota in applicable.quotas)))
        .order_by(AbsenceQuota.id)
        .with_for_update()
    )
    zone = await person_zone(session, organisation, person)
    since = min(quota.start_ms for quota in applicable.quotas) - DAY_MS
    records = await absence_records(session, organisation.id, person.id, absence.id, since)
    after = [(s, d) for _i, s, d in records]
    before = [(s, d) for i, s, d in records if i not in changed_ids] + list(previous)
    changed_days = {local_day(s, zone) for i, s, _d in records if i in changed_ids}
    after_amounts = absence_amounts(absence.unit, after, zone)
    before_amounts = absence_amounts(absence.unit, before, zone)
    accrual = accrual_of(await accrual_row(session, organisation.id, absence.id))
    today = local_day(now_ms, zone)
    for quota in applicable.quotas:
        allowance = allowance_of(quota, zone)
        for day in sorted(changed_days):
            if cycle_containing(allowance, day) is None:
                continue
            balance = overdraws(accrual, allowance, before_amounts, after_amounts, today, day)
            if balance is not None:
                raise RuleViolation(
                    "Not enough time off left: this absence would take "
                    f"{describe(quota, allowance)} to {amount_text(balance, absence.unit)}, "
                    "and that allowance does not "
                    "allow a negative balance"
                )


async def check_records_balance(
    session: AsyncSession,
    organisation: Organisation,
    now_ms: int,
    records: Sequence[TimeRecord],
    previous: tuple[str | None, int, int] | None = None,
) -> None:
    """The time-record mutations' hook (after the change is flushed): refuse absences that
    overdraw an allowance. `previous` is (absence_id, start_ms, duration_ms) of a single
    edited record before the edit; added records have none."""
    groups: dict[tuple[str, str], list[TimeRecord]] = {}
    for record in records:
        if record.absence is not None:
            groups.setdefault((record.person_id, record.absence.id), []).append(record)
    for (_person_id, absence_id), group in groups.items():
        before = [(previous[1], previous[2])] if previous and previous[0] == absence_id else []
        first = group[0]
        assert first.absence is not None
        await check_balance(session, organisation, first.person, first.absence,
                            {record.id for record in group}, before, now_ms)
