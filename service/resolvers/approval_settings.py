"""The approval workflow's settings: each account's, tag's and person's approval stages and
timesheet settings (approval reminder, who may edit, auto-submit, work schedules), edited by
administrators; `SvcOrganisation`, `SvcPerson` and `SvcTag` show them with where they come
from."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ariadne import MutationType, ObjectType, ScalarType
from graphql import GraphQLError
from sqlalchemy import select

from service import permissions
from service.approvals import settings as cfg
from service.approvals import stages as st
from service.approvals.state import people
from service.errors import BadInput, PermissionDenied
from service.graphql.context import RequestContext
from service.lookup import get_in_org, get_many_in_org
from service.models import Organisation, Person, Tag

require_permission = permissions.requirer(permissions.APPROVALS)

mutation = MutationType()
organisation_type = ObjectType("SvcOrganisation")
person_type = ObjectType("SvcPerson")
tag_type = ObjectType("SvcTag")
stage_type_scalar = ScalarType("SvcApprovalStageType")


@stage_type_scalar.value_parser
def parse_stage_type(value: Any) -> str:
    if isinstance(value, str) and value in st.STAGE_TYPES:
        return value
    raise GraphQLError(
        f"SvcApprovalStageType must be one of {', '.join(st.STAGE_TYPES)}, got {value!r}"
    )


async def _validated_stages(
    context: RequestContext, stages: Sequence[Mapping[str, Any] | None] | None
) -> list[dict[str, Any]] | None:
    if stages is None:
        return None
    try:
        parsed = st.parse_stage_inputs(stages)
    except st.StageInputError as error:
        where = f"stages[{error.index}]" + (f".{error.field_name}" if error.field_name else "")
        raise BadInput(where, error.problem) from None
    for index, stage in enumerate(parsed):
        await get_many_in_org(context.session, Person, context.org_id, stage["personIds"],
                              f"stages[{index}].personIds", "person")
        await get_many_in_org(context.session, Tag, context.org_id, stage["tagIds"],
                              f"stages[{index}].tagIds", "tag")
    return parsed


async def _stages_value(context: RequestContext, resolved: cfg.Resolved) -> dict[str, Any] | None:
    if resolved.value is None:
        return {"value": None, "path": []}
    person_ids = [p for s in resolved.value for p in s.get("personIds") or []]
    tag_ids = [t for s in resolved.value for t in s.get("tagIds") or []]
    found = await people(context.session, context.org_id, person_ids)
    tags = {
        t.id: t
        for t in (
            await context.session.scalars(
                select(Tag).where(Tag.organisation_id == context.org_id, Tag.id.in_(tag_ids))
            )
        ).unique()
    } if tag_ids else {}
    return {
        "value": [
            {
                "type": s["type"],
                "quorum": s.get("quorum") or st.QUORUM_ANY,
                "persons": [found[p] for p in s.get("personIds") or [] if p in found],
                "tags": [tags[t] for t in s.get("tagIds") or [] if t in tags],
            }
            for s in resolved.value
        ],
        "path": resolved.path,
    }


@mutation.field("editOrganisationApprovalStages")
async def resolve_edit_organisation_stages(
    _root: Any, info: Any, stages: Sequence[Mapping[str, Any] | None] | None = None
) -> Organisation:
    context: RequestContext = info.context
    require_permission(context, "configure the approval workflow")
    parsed = await _validated_stages(context, stages)
    cfg.set_value(context.organisation, cfg.APPROVAL_STAGES, parsed or None)
    return context.organisation


@mutation.field("editPersonApprovalStages")
async def resolve_edit_person_stages(
    _root: Any, info: Any, id: str, stages: Sequence[Mapping[str, Any] | None] | None = None
) -> Person:
    context: RequestContext = info.context
    require_permission(context, "configure the approval workflow")
    person = await get_in_org(context.session, Person, context.org_id, id, "id", "person")
    cfg.set_value(person, cfg.APPROVAL_STAGES, await _validated_stages(context, stages))
    return person


@mutation.field("editTagApprovalStages")
async def resolve_edit_tag_stages(
    _root: Any, info: Any, id: str, stages: Sequence[Mapping[str, Any] | None] | None = None
) -> Tag:
    context: RequestContext = info.context
    require_permission(context, "configure the approval workflow")
    tag = await get_in_org(context.session, Tag, context.org_id, id, "id", "tag")
    cfg.set_value(tag, cfg.APPROVAL_STAGES, await _validated_stages(context, stages))
    return tag


def _reminder_days(value: int | None) -> int | None:
    if value is not None and not 0 <= value <= 365:
        raise BadInput("approvalReminder", "must be a number of days from 0 (off) to 365")
    return value


def _auto_submit_days(value: int | None) -> int | None:
    if value is not None and not 0 <= value <= 365:
        raise BadInput("autoSubmit", "must be a number of days from 0 to 365 (null: off)")
    return value


async def _set_on(
    context: RequestContext, target: str, entity_id: str | None, key: str, value: Any
) -> Any:
    require_permission(context, "change the timesheet settings")
    entity: Organisation | Person | Tag
    if target == "organisation":
        entity = context.organisation
    elif target == "person":
        entity = await get_in_org(context.session, Person, context.org_id, entity_id, "id",
                                  "person")
    else:
        entity = await get_in_org(context.session, Tag, context.org_id, entity_id, "id", "tag")
    cfg.set_value(entity, key, value)
    return entity


def _bind_setting(name: str, target: str, key: str, argument: str, check: Any = None) -> None:
    async def resolver(_root: Any, info: Any, id: str | None = None, **kwargs: Any) -> Any:
        value = kwargs.get(argument)
        if check is not None:
            value = check(value)
        return await _set_on(info.context, target, id, key, value)

    mutation.set_field(name, resolver)


for _target, _cap in (("organisation", "Organisation"), ("tag", "Tag"), ("person", "Person")):
    _bind_setting(f"edit{_cap}TimeSettingsApprovalReminder", _target, cfg.APPROVAL_REMINDER,
                  "approvalReminder", _reminder_days)
    _bind_setting(f"edit{_cap}TimeSettingsOwnerOrAdminOnly", _target, cfg.OWNER_OR_ADMIN_ONLY,
                  "ownerOrAdminOnly")
    _bind_setting(f"edit{_cap}TimeSettingsOnlyAdminEditsOthers", _target,
                  cfg.ONLY_ADMIN_EDITS_OTHERS, "onlyAdminEditsOthers")
    _bind_setting(f"edit{_cap}TimeSettingsAutoSubmit", _target, cfg.AUTO_SUBMIT, "autoSubmit",
                  _auto_submit_days)


@organisation_type.field("approvalStages")
async def resolve_org_stages(organisation: Organisation, info: Any) -> Any:
    return await _stages_value(
        info.context, cfg.own(organisation, "organisations", cfg.APPROVAL_STAGES)
    )


@organisation_type.field("timeSettings")
async def resolve_org_time_settings(organisation: Organisation, _info: Any) -> Any:
    return cfg.time_settings(
        lambda key: cfg.as_attribute(cfg.own(organisation, "organisations", key))
    )


async def _person_resolved(
    context: RequestContext, person: Person, key: str, *, private: bool = True
) -> cfg.Resolved:
    if private and not await context.can_access_person_data(person.id):
        raise PermissionDenied("only the person, their managers and administrators see this")
    return await cfg.resolve(context.session, context.organisation, person, key)


@person_type.field("approvalStages")
async def resolve_person_stages(person: Person, info: Any) -> Any:
    context: RequestContext = info.context
    return await _stages_value(context, await _person_resolved(context, person,
                                                                cfg.APPROVAL_STAGES))


@person_type.field("timeSettings")
async def resolve_person_time_settings(person: Person, info: Any) -> Any:
    context: RequestContext = info.context
    values = {
        key: cfg.as_attribute(await _person_resolved(context, person, key, private=False))
        for key in (cfg.APPROVAL_REMINDER, cfg.OWNER_OR_ADMIN_ONLY, cfg.ONLY_ADMIN_EDITS_OTHERS,
                    cfg.AUTO_SUBMIT, *cfg.SCHEDULE_SETTINGS)
    }
    return cfg.time_settings(lambda key: values[key])


def _tag_resolved(context: RequestContext, tag: Tag, key: str) -> cfg.Resolved:
    own = cfg.own(tag, "tags", key)
    if own.value is not None:
        return own
    return cfg.own(context.organisation, "organisations", key)


@tag_type.field("approvalStages")
async def resolve_tag_stages(tag: Tag, info: Any) -> Any:
    context: RequestContext = info.context
    return await _stages_value(context, _tag_resolved(context, tag, cfg.APPROVAL_STAGES))


@tag_type.field("timeSettings")
async def resolve_tag_time_settings(tag: Tag, info: Any) -> Any:
    context: RequestContext = info.context
    return cfg.time_settings(lambda key: cfg.as_attribute(_tag_resolved(context, tag, key)))


BINDABLES = [mutation, organisation_type, person_type, tag_type, stage_type_scalar]
