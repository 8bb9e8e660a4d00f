"""Time-off consumption and the allowance report: `getAbsenceQuotaConsumed`,
`getAbsenceQuotaReport`.

getAbsenceQuotaConsumed: per allowance, what the person consumed in its current cycle
(the one covering today; the first one before it starts), in the absence type's unit.

getAbsenceQuotaReport: for every person the caller may see (active ones unless
includeArchived) and every allowance that applies to them, one entry per cycle that
overlaps [startTime, endTime), computed as of the report's last day: `available` is what
was carried in plus what was awarded by then, `accruedCorrection` the adjustment of that
cycle and `consumed` every absence in the cycle; what remains is
available + accruedCorrection - consumed. Also the period's absence records (duration in
the type's unit; status the approval status of their timesheet, `d` without one, `a` for
time off of a type approved automatically or needing no approval), and the absence types
and persons named.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ariadne import QueryType
from sqlalchemy import and_, select

from service.absences.allowances import (
    applicable_quotas,
    day_start_ms,
    local_day,
    quota_ledger,
)
from service.absences.approval import unreviewed_type_ids
from service.absences.models import AbsenceQuota
from service.absences.time_off_rules import HOUR_MS, WORKING_DAY_MS
from service.errors import BadInput, PermissionDenied
from service.graphql.context import RequestContext
from service.graphql.filters import Condition, filter_clause
from service.lookup import get_in_org, get_many_in_org
from service.models import (
    STATUS_APPROVED,
    STATUS_DRAFT,
    AbsenceType,
    Person,
    PersonTag,
    TimeRecord,
    Timesheet,
)
from service.organisation import person_zone

query = QueryType()

PERSON_FILTERS: Mapping[str, Condition] = {
    "personId": lambda value: Person.id == value,
    "notPersonId": lambda value: Person.id != value,
    "personTagIds": lambda value: Person.id.in_(
        select(PersonTag.person_id).where(PersonTag.tag_id.in_(list(value)))),
    "personNotTagIds": lambda value: Person.id.not_in(
        select(PersonTag.person_id).where(PersonTag.tag_id.in_(list(value)))),
}


@query.field("getAbsenceQuotaConsumed")
async def resolve_get_quota_consumed(
    _root: Any, info: Any, personId: str, absenceQuotaIds: Sequence[str]
) -> list[float]:
    context: RequestContext = info.context
    person = await get_in_org(context.session, Person, context.org_id, personId, "personId",
                              "person")
    if not await context.can_access_person_data(person.id):
        raise PermissionDenied("you may not see this person's allowances")
    quotas = await get_many_in_org(context.session, AbsenceQuota, context.org_id,
                                   list(absenceQuotaIds), "absenceQuotaIds", "allowance")
    today = local_day(context.now_ms, await person_zone(context.session, context.organisation,
                                                         person))
    consumed: list[float] = []
    for quota in quotas:
        book, allowance = await quota_ledger(context.session, context.organisation, person,
                                             quota, today)
        if not book.cycles:
            book, allowance = await quota_ledger(context.session, context.organisation, person,
                                                 quota, allowance.start)
        consumed.append(round(float(book.cycles[-1].consumed), 6) if book.cycles else 0.0)
    return consumed


def _color(value: str | None) -> int | None:
    text = (value or "").lstrip("#")
    try:
        return int(text, 16) if len(text) == 6 else None
    except ValueError:
        return None


async def _persons(
    context: RequestContext,
    filters: Sequence[Mapping[str, Any] | None] | None,
    include_archived: bool | None,
) -> list[Person]:
    conditions = [Person.organisation_id == context.org_id,
                  filter_clause(filters, PERSON_FILTERS, "filters")]
    if not include_archived:
        conditions.append(Person.archived.is_(False))
    visible = await context.visible_person_ids()
    if visible is not None:
        conditions.append(Person.id.in_(list(visible)))
    statement = select(Person).where(and_(*conditions)).order_by(Person.name, Person.id)
    return list((await context.session.scalars(statement)).unique())


@query.field("getAbsenceQuotaReport")
async def resolve_get_quota_report(
    _root: Any,
    info: Any,
    startTime: int,
    endTime: int,
    filters: Sequence[Mapping[str, Any] | None] | None = None,
    absenceTypeIds: Sequence[str] | None = None,
    notAbsenceTypeIds: Sequence[str] | None = None,
    includeArchived: bool | None = None,
) -> dict[str, Any]:
    context: RequestContext = info.context
    if endTime <= startTime:
        raise BadInput("endTime", "must be after startTime")
    if endTime - startTime > 10 * 366 * 24 * HOUR_MS:
        raise BadInput("endTime", "the report covers at most 10 years")
    wanted = await get_many_in_org(context.session, AbsenceType, context.org_id,
                                   list(absenceTypeIds or []), "absenceTypeIds", "absence type")
    unwanted = await get_many_in_org(context.session, AbsenceType, context.org_id,
                                     list(notAbsenceTypeIds or []), "notAbsenceTypeIds",
                                     "absence type")
    persons = await _persons(context, filters, includeArchived)
    type_ids = {t.id for t in wanted} if absenceTypeIds else None
    excluded = {t.id for t in unwanted}
    entries: list[dict[str, Any]] = []
    types: dict[str, AbsenceType] = {}
    for person in persons:
        zone = await person_zone(context.session, context.organisation, person)
        first, last = local_day(startTime, zone), local_day(endTime - 1, zone)
        applicable = await applicable_quotas(context.session, context.organisation, person,
                                             type_ids)
        for quota in applicable.quotas:
            if quota.absence_type_id in excluded:
                continue
            book, allowance = await quota_ledger(context.session, context.organisation, person,
                                                 quota, last)
            for cycle in book.cycles:
                if cycle.end <= first:
                    continue
                types[quota.absence_type_id] = quota.absence_type
                entries.append({
                    "personId": person.id,
                    "absenceTypeId": quota.absence_type_id,
                    "quotaId": quota.id,
                    "startTime": day_start_ms(cycle.start, zone),
                    "endTime": day_start_ms(cycle.end, zone),
                    "endDateExtension": None if quota.recurrent else quota.end_date_extension_ms,
                    "available": float(cycle.carried_in + cycle.awarded),
                    "accruedCorrection": float(cycle.correction),
                    "carryForwardLimit": float(allowance.carry_forward_limit),
                    "allowNegativeBalance": quota.allow_negative_balance,
                    "consumed": round(float(cycle.consumed), 6),
                })
    records = await _records(context, persons, startTime, endTime, type_ids, excluded, types)
    return {
        "quotas": entries,
        "records": records,
        "absenceTypes": [
            {"id": t.id, "name": t.name, "color": _color(t.color), "unit": t.unit}
            for t in sorted(types.values(), key=lambda t: (t.name, t.id))
        ],
        "persons": [{"id": p.id, "name": p.name, "color": None} for p in persons],
    }


async def _records(
    context: RequestContext,
    persons: list[Person],
    start: int,
    end: int,
    type_ids: set[str] | None,
    excluded: set[str],
    types: dict[str, AbsenceType],
) -> list[dict[str, Any]]:
    if not persons:
        return []
    conditions = [
        TimeRecord.organisation_id == context.org_id,
        TimeRecord.person_id.in_([p.id for p in persons]),
        TimeRecord.absence_id.is_not(None),
        TimeRecord.start_ms >= start,
        TimeRecord.start_ms < end,
    ]
    if type_ids is not None:
        conditions.append(TimeRecord.absence_id.in_(list(type_ids)))
    if excluded:
        conditions.append(TimeRecord.absence_id.not_in(list(excluded)))
    rows = list((await context.session.scalars(
        select(TimeRecord).where(*conditions).order_by(TimeRecord.start_ms, TimeRecord.id)
    )).unique())
    sheets = list(await context.session.scalars(
        select(Timesheet).where(
            Timesheet.organisation_id == context.org_id,
            Timesheet.person_id.in_([p.id for p in persons]),
            Timesheet.start_ms < end,
            Timesheet.end_ms > start,
        )
    ))
    found: list[dict[str, Any]] = []
    approved_at_once = await unreviewed_type_ids(context.session, context.org_id)
    for record in rows:
        absence = record.absence
        if absence is None:
            continue
        types.setdefault(absence.id, absence)
        divisor = HOUR_MS if absence.unit == "hour" else WORKING_DAY_MS
        status = STATUS_APPROVED if absence.id in approved_at_once else next(
            (s.status for s in sheets if s.person_id == record.person_id
             and s.start_ms <= record.start_ms < s.end_ms), STATUS_DRAFT)
        found.append({
            "personId": record.person_id,
            "absenceTypeId": absence.id,
            "startTime": record.start_ms,
            "endTime": record.end_ms,
            "duration": round(record.duration_ms / divisor, 6),
            "status": status,
        })
    return found


BINDABLES = [query]
