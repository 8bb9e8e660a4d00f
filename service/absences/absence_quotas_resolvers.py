"""Time-off allowances: `add|delete{Organisation,Tag,Person}AbsenceQuota`,
`editAbsenceQuota…` and the `absenceQuotas` attribute of the organisation, tags and persons.

Everyone reads the organisation's and tags' allowances; a person's allowances (their own and
the inherited ones) are read by whoever may see the person's data. Administrators edit them.
Amounts are whole numbers in the absence type's unit (days or hours).
"""

from __future__ import annotations

from typing import Any

from ariadne import MutationType, ObjectType
from sqlalchemy import select

from service.absences.allowances import applicable_quotas
from service.absences.models import AbsenceQuota
from service.access import PEOPLE, requirer
from service.errors import BadInput, NotFound, PermissionDenied
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import AbsenceType, Organisation, Person, Tag

require_permission = requirer(PEOPLE)

mutation = MutationType()
quota_type = ObjectType("SvcAbsenceQuota")
organisation_type = ObjectType("SvcOrganisation")
tag_type = ObjectType("SvcTag")
person_type = ObjectType("SvcPerson")


@quota_type.field("absenceType")
def resolve_quota_type(quota: AbsenceQuota, _info: Any) -> AbsenceType:
    return quota.absence_type


@quota_type.field("startTime")
def resolve_quota_start(quota: AbsenceQuota, _info: Any) -> int:
    return quota.start_ms


@quota_type.field("endTime")
def resolve_quota_end(quota: AbsenceQuota, _info: Any) -> int:
    return quota.end_ms


@quota_type.field("endDateExtension")
def resolve_quota_extension(quota: AbsenceQuota, _info: Any) -> int | None:
    return quota.end_date_extension_ms


for _field, _attribute in (("carryForwardLimit", "carry_forward_limit"),
                           ("accruedCorrection", "accrued_correction"),
                           ("allowNegativeBalance", "allow_negative_balance")):
    quota_type.set_field(_field, lambda quota, _info, _a=_attribute: getattr(quota, _a))


def _check_amount(argument: str, value: int | None, minimum: int | None = 0) -> None:
    if value is None:
        return
    if minimum is not None and value < minimum:
        raise BadInput(argument, "must not be negative")
    if abs(value) > 1_000_000:
        raise BadInput(argument, "must be at most 1000000")


def _check_times(start: int, end: int, extension: int | None, argument: str) -> None:
    if end <= start:
        raise BadInput(argument, "the endTime must be after the startTime")
    if extension is not None and extension < end:
        raise BadInput("endDateExtension", "must not be before the endTime")


async def _add_quota(
    context: RequestContext,
    owner: dict[str, str | None],
    absenceId: str,
    startTime: int,
    endTime: int,
    available: int | None = None,
    endDateExtension: int | None = None,
    carryForwardLimit: int | None = None,
    accruedCorrection: int | None = None,
    allowNegativeBalance: bool | None = None,
    recurrent: bool | None = None,
) -> AbsenceQuota:
    absence = await get_in_org(context.session, AbsenceType, context.org_id, absenceId,
                               "absenceId", "absence type")
    _check_times(startTime, endTime, endDateExtension, "endTime")
    _check_amount("available", available)
    _check_amount("carryForwardLimit", carryForwardLimit)
    _check_amount("accruedCorrection", accruedCorrection, minimum=None)
    quota = AbsenceQuota(
        organisation_id=context.org_id,
        absence_type_id=absence.id,
        tag_id=owner.get("tag_id"),
        person_id=owner.get("person_id"),
        start_ms=startTime,
        end_ms=endTime,
        available=available or 0,
        end_date_extension_ms=endDateExtension,
        carry_forward_limit=carryForwardLimit or 0,
        accrued_correction=accruedCorrection or 0,
        allow_negative_balance=bool(allowNegativeBalance),
        recurrent=bool(recurrent),
    )
    quota.absence_type = absence
    context.session.add(quota)
    await context.session.flush()
    return quota


@mutation.field("addOrganisationAbsenceQuota")
async def resolve_add_organisation_quota(_root: Any, info: Any, **args: Any) -> AbsenceQuota:
    context: RequestContext = info.context
    require_permission(context, "add allowances")
    return await _add_quota(context, {}, **args)


@mutation.field("addTagAbsenceQuota")
async def resolve_add_tag_quota(_root: Any, info: Any, tagId: str, **args: Any) -> AbsenceQuota:
    context: RequestContext = info.context
    require_permission(context, "add allowances")
    tag = await get_in_org(context.session, Tag, context.org_id, tagId, "tagId", "tag")
    return await _add_quota(context, {"tag_id": tag.id}, **args)


@mutation.field("addPersonAbsenceQuota")
async def resolve_add_person_quota(
    _root: Any, info: Any, personId: str, **args: Any
) -> AbsenceQuota:
    context: RequestContext = info.context
    require_permission(context, "add allowances")
    person = await get_in_org(context.session, Person, context.org_id, personId, "personId",
                              "person")
    return await _add_quota(context, {"person_id": person.id}, **args)


async def _load_quota(
    context: RequestContext, id: str, argument: str = "id",
    person_id: str | None = None, tag_id: str | None = None, organisation: bool = False,
) -> AbsenceQuota:
    require_permission(context, "edit allowances")
    quota = await get_in_org(context.session, AbsenceQuota, context.org_id, id, argument,
                             "allowance")
    if person_id is not None and quota.person_id != person_id:
        raise NotFound(argument, id, "allowance of this person")
    if tag_id is not None and quota.tag_id != tag_id:
        raise NotFound(argument, id, "allowance of this tag")
    if organisation and (quota.person_id is not None or quota.tag_id is not None):
        raise NotFound(argument, id, "allowance of the organisation")
    return quota


async def _delete(context: RequestContext, quota: AbsenceQuota) -> AbsenceQuota:
    await context.session.delete(quota)
    await context.session.flush()
    return quota


@mutation.field("deleteOrganisationAbsenceQuota")
async def resolve_delete_organisation_quota(
    _root: Any, info: Any, absenceQuotaId: str
) -> AbsenceQuota:
    context: RequestContext = info.context
    return await _delete(context, await _load_quota(context, absenceQuotaId, "absenceQuotaId",
                                                    organisation=True))


@mutation.field("deleteTagAbsenceQuota")
async def resolve_delete_tag_quota(
    _root: Any, info: Any, tagId: str, absenceQuotaId: str
) -> AbsenceQuota:
    context: RequestContext = info.context
    require_permission(context, "edit allowances")
    tag = await get_in_org(context.session, Tag, context.org_id, tagId, "tagId", "tag")
    return await _delete(context, await _load_quota(context, absenceQuotaId, "absenceQuotaId",
                                                    tag_id=tag.id))


@mutation.field("deletePersonAbsenceQuota")
async def resolve_delete_person_quota(
    _root: Any, info: Any, personId: str, absenceQuotaId: str
) -> AbsenceQuota:
    context: RequestContext = info.context
    require_permission(context, "edit allowances")
    person = await get_in_org(context.session, Person, context.org_id, personId, "personId",
                              "person")
    return await _delete(context, await _load_quota(context, absenceQuotaId, "absenceQuotaId",
                                                    person_id=person.id))


@mutation.field("editAbsenceQuotaStartTime")
async def resolve_edit_quota_start(_root: Any, info: Any, id: str, startTime: int) -> Any:
    quota = await _load_quota(info.context, id)
    _check_times(startTime, quota.end_ms, quota.end_date_extension_ms, "startTime")
    quota.start_ms = startTime
    return quota


@mutation.field("editAbsenceQuotaEndTime")
async def resolve_edit_quota_end(_root: Any, info: Any, id: str, endTime: int) -> Any:
    quota = await _load_quota(info.context, id)
    _check_times(quota.start_ms, endTime, quota.end_date_extension_ms, "endTime")
    quota.end_ms = endTime
    return quota


@mutation.field("editAbsenceQuotaEndDateExtension")
async def resolve_edit_quota_extension(
    _root: Any, info: Any, id: str, endDateExtension: int | None = None
) -> Any:
    quota = await _load_quota(info.context, id)
    _check_times(quota.start_ms, quota.end_ms, endDateExtension, "endDateExtension")
    quota.end_date_extension_ms = endDateExtension
    return quota


@mutation.field("editAbsenceQuotaAvailable")
async def resolve_edit_quota_available(_root: Any, info: Any, id: str, available: int) -> Any:
    _check_amount("available", available)
    quota = await _load_quota(info.context, id)
    quota.available = available
    return quota


@mutation.field("editAbsenceQuotaCarryForwardLimit")
async def resolve_edit_quota_carry(
    _root: Any, info: Any, id: str, carryForwardLimit: int
) -> Any:
    _check_amount("carryForwardLimit", carryForwardLimit)
    quota = await _load_quota(info.context, id)
    quota.carry_forward_limit = carryForwardLimit
    return quota


@mutation.field("editAbsenceQuotaAccruedCorrection")
async def resolve_edit_quota_correction(
    _root: Any, info: Any, id: str, accruedCorrection: int
) -> Any:
    _check_amount("accruedCorrection", accruedCorrection, minimum=None)
    quota = await _load_quota(info.context, id)
    quota.accrued_correction = accruedCorrection
    return quota


@mutation.field("editAbsenceQuotaAllowNegativeBalance")
async def resolve_edit_quota_negative(
    _root: Any, info: Any, id: str, allowNegativeBalance: bool
) -> Any:
    quota = await _load_quota(info.context, id)
    quota.allow_negative_balance = allowNegativeBalance
    return quota


@mutation.field("editAbsenceQuotaRecurrent")
async def resolve_edit_quota_recurrent(_root: Any, info: Any, id: str, recurrent: bool) -> Any:
    quota = await _load_quota(info.context, id)
    quota.recurrent = recurrent
    return quota


async def _own(context: RequestContext, **where: Any) -> list[AbsenceQuota]:
    statement = select(AbsenceQuota).where(AbsenceQuota.organisation_id == context.org_id)
    for column, value in where.items():
        attribute = getattr(AbsenceQuota, column)
        statement = statement.where(attribute.is_(None) if value is None else attribute == value)
    statement = statement.order_by(AbsenceQuota.start_ms, AbsenceQuota.id)
    return list((await context.session.scalars(statement)).unique())


@organisation_type.field("absenceQuotas")
async def resolve_organisation_quotas(item: Organisation, info: Any) -> dict[str, Any]:
    quotas = await _own(info.context, person_id=None, tag_id=None)
    path = [{"id": item.id, "collection": "organisations", "name": item.name}] if quotas else []
    return {"value": quotas, "path": path}


@tag_type.field("absenceQuotas")
async def resolve_tag_quotas(item: Tag, info: Any) -> dict[str, Any]:
    quotas = await _own(info.context, tag_id=item.id)
    return {"value": quotas,
            "path": [{"id": item.id, "collection": "tags", "name": item.name}] if quotas else []}


@person_type.field("absenceQuotas")
async def resolve_person_quotas(item: Person, info: Any) -> dict[str, Any]:
    """The allowances that apply to the person: their own, else their tags', else the
    organisation's (per absence type), with where they come from."""
    context: RequestContext = info.context
    if not await context.can_access_person_data(item.id):
        raise PermissionDenied("you may not see this person's allowances")
    applicable = await applicable_quotas(context.session, context.organisation, item)
    return {"value": applicable.quotas, "path": applicable.path}


BINDABLES = [mutation, quota_type, organisation_type, tag_type, person_type]
