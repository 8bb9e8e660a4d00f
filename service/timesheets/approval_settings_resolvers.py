"""The approval workflow's stages at account, tag and person level, edited by administrators;
`SvcOrganisation`, `SvcPerson` and `SvcTag` show them with where they come from. (The other
timesheet settings are rows of `service/organisation/settings_registry.py`.)"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ariadne import MutationType, ObjectType, ScalarType
from graphql import GraphQLError
from sqlalchemy import select

from service.access import APPROVALS, requirer
from service.errors import BadInput, PermissionDenied
from service.graphql.context import RequestContext
from service.lookup import get_in_org, get_many_in_org
from service.models import Organisation, Person, Tag
from service.organisation import APPROVAL_STAGES, Resolved, own_value, resolve, set_value
from service.timesheets import stages as st
from service.timesheets.state import people
from service.value_words import choice_problem

mutation = MutationType()
require_permission = requirer(APPROVALS)
organisation_type = ObjectType("SvcOrganisation")
person_type = ObjectType("SvcPerson")
tag_type = ObjectType("SvcTag")
stage_type_scalar = ScalarType("SvcApprovalStageType")


@stage_type_scalar.value_parser
def parse_stage_type(value: Any) -> str:
    if isinstance(value, str) and value in st.STAGE_TYPES:
        return value
    raise GraphQLError(
        f"SvcApprovalStageType {choice_problem(st.STAGE_TYPES, value)}"
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


async def _stages_value(context: RequestContext, resolved: Resolved) -> dict[str, Any] | None:
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
    set_value(context.organisation, APPROVAL_STAGES, parsed or None)
    return context.organisation


@mutation.field("editPersonApprovalStages")
async def resolve_edit_person_stages(
    _root: Any, info: Any, id: str, stages: Sequence[Mapping[str, Any] | None] | None = None
) -> Person:
    context: RequestContext = info.context
    require_permission(context, "configure the approval workflow")
    person = await get_in_org(context.session, Person, context.org_id, id, "id", "person")
    set_value(person, APPROVAL_STAGES, await _validated_stages(context, stages))
    return person


@mutation.field("editTagApprovalStages")
async def resolve_edit_tag_stages(
    _root: Any, info: Any, id: str, stages: Sequence[Mapping[str, Any] | None] | None = None
) -> Tag:
    context: RequestContext = info.context
    require_permission(context, "configure the approval workflow")
    tag = await get_in_org(context.session, Tag, context.org_id, id, "id", "tag")
    set_value(tag, APPROVAL_STAGES, await _validated_stages(context, stages))
    return tag


@organisation_type.field("approvalStages")
async def resolve_org_stages(organisation: Organisation, info: Any) -> Any:
    return await _stages_value(
        info.context, own_value(organisation, "organisations", APPROVAL_STAGES)
    )


async def _person_resolved(
    context: RequestContext, person: Person, key: str, *, private: bool = True
) -> Resolved:
    if private and not await context.can_access_person_data(person.id):
        raise PermissionDenied("only the person, their managers and administrators see this")
    return await resolve(context.session, context.organisation, person, key)


@person_type.field("approvalStages")
async def resolve_person_stages(person: Person, info: Any) -> Any:
    context: RequestContext = info.context
    return await _stages_value(context, await _person_resolved(context, person,
                                                                APPROVAL_STAGES))


def _tag_resolved(context: RequestContext, tag: Tag, key: str) -> Resolved:
    own = own_value(tag, "tags", key)
    if own.value is not None:
        return own
    return own_value(context.organisation, "organisations", key)


@tag_type.field("approvalStages")
async def resolve_tag_stages(tag: Tag, info: Any) -> Any:
    context: RequestContext = info.context
    return await _stages_value(context, _tag_resolved(context, tag, APPROVAL_STAGES))


BINDABLES = [mutation, organisation_type, person_type, tag_type, stage_type_scalar]
