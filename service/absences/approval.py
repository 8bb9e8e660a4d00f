"""How the approval workflow treats time off, by its absence type's approval mode
(service/type_options/type_flags.py): time off that is approved automatically or needs no approval
is
left out of what a timesheet's approvers review (`reviewed`), a submission holding nothing
else is approved at once (`only_unreviewed`), and time off needing no approval is never
locked by its timesheet (`unlocked`)."""

from __future__ import annotations

from sqlalchemy import ColumnElement, Select, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from service.models import AbsenceTypeOptions, TimeRecord


def _unreviewed_types(org_id: str) -> Select[str]:
    return select(AbsenceTypeOptions.absence_type_id).where(
        AbsenceTypeOptions.organisation_id == org_id,
        or_(AbsenceTypeOptions.auto_approve.is_(True), AbsenceTypeOptions.no_approval.is_(True)),
    )


def reviewed(org_id: str) -> ColumnElement[bool]:
    """The time records a timesheet's approvers review: work, and time off of types that
    follow the timesheet's workflow."""
    return or_(TimeRecord.absence_id.is_(None),
               TimeRecord.absence_id.not_in(_unreviewed_types(org_id)))


async def only_unreviewed(
    session: AsyncSession, org_id: str, person_id: str, start_ms: int, end_ms: int
) -> bool:
    """Whether the period holds time records and none of them is for approvers to review."""
    counts = (await session.execute(
        select(func.count(), func.count().filter(reviewed(org_id))).select_from(TimeRecord)
        .where(TimeRecord.organisation_id == org_id, TimeRecord.person_id == person_id,
               TimeRecord.start_ms >= start_ms, TimeRecord.start_ms < end_ms)
    )).one()
    return bool(counts[0]) and not counts[1]


async def unlocked(session: AsyncSession, org_id: str, absence_id: str | None) -> bool:
    """Whether time off of this type needs no approval (its timesheet never locks it)."""
    if absence_id is None:
        return False
    options = await session.get(AbsenceTypeOptions, (absence_id,))
    return (options is not None and options.organisation_id == org_id
            and bool(options.no_approval))


async def unreviewed(session: AsyncSession, org_id: str, absence_id: str | None) -> bool:
    """Whether time off of this type is left out of what approvers review."""
    if absence_id is None:
        return False
    options = await session.get(AbsenceTypeOptions, (absence_id,))
    return (options is not None and options.organisation_id == org_id
            and bool(options.no_approval or options.auto_approve))


async def unreviewed_type_ids(session: AsyncSession, org_id: str) -> set[str]:
    """The organisation's absence types whose time off is approved without its timesheet:
    reports show such time off approved as soon as it is recorded."""
    return set(await session.scalars(_unreviewed_types(org_id)))
