"""The schedule timeline of the organisation, tags and persons (admins assign), and the
relation fields that show it."""

from __future__ import annotations

from typing import Any

from ariadne import MutationType, ObjectType
from sqlalchemy import delete, select

from service.access import SETTINGS, requirer
from service.errors import BadInput
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import Organisation, Person, Tag
from service.plannings.models import (
    TARGET_ORGANISATION,
    TARGET_PERSON,
    TARGET_TAG,
    ScheduleTimelineEntry,
    ScheduleType,
)
from service.structure import raw_relation

require_permission = requirer(SETTINGS)

mutation = MutationType()
organisation_type = ObjectType("SvcOrganisation")
organisation_relations = ObjectType("SvcOrganisationRelations")
tag_type = ObjectType("SvcTag")
tag_relations = ObjectType("SvcTagRelations")
person_relations = ObjectType("SvcPersonRelations")
type_relations = ObjectType("SvcScheduleTypeRelations")

KEYS = {TARGET_ORGANISATION: "scheduleTimelineOfOrganisation",
        TARGET_TAG: "scheduleTimelineOfTag", TARGET_PERSON: "scheduleTimelineOfPerson"}
COLLECTIONS = {TARGET_ORGANISATION: "organisations", TARGET_TAG: "tags",
               TARGET_PERSON: "persons"}


async def _target(context: RequestContext, kind: str, target_id: str | None) -> Any:
    if kind == TARGET_PERSON:
        return await get_in_org(context.session, Person, context.org_id, target_id,
                                "personId", "person")
    if kind == TARGET_TAG:
        return await get_in_org(context.session, Tag, context.org_id, target_id, "tagId", "tag")
    return context.organisation


def _relation(entry: ScheduleTimelineEntry) -> dict[str, Any]:
    return raw_relation(entry.id, entry.target_id, "scheduleTimeline",
                        entry.schedule_type_id, KEYS[entry.target_kind], entry.start_ms)


async def _entry(context: RequestContext, kind: str, target_id: str,
                 type_id: str) -> ScheduleTimelineEntry | None:
    return (await context.session.scalars(select(ScheduleTimelineEntry).where(
        ScheduleTimelineEntry.organisation_id == context.org_id,
        ScheduleTimelineEntry.target_kind == kind,
        ScheduleTimelineEntry.target_id == target_id,
        ScheduleTimelineEntry.schedule_type_id == type_id,
    ))).first()


async def assign(context: RequestContext, kind: str, target_id: str | None, type_id: str,
                 start_ms: int | None) -> dict[str, Any]:
    """Puts the type on the target's timeline from `start_ms`, or moves its start."""
    require_permission(context, "assign work schedules")
    target = await _target(context, kind, target_id)
    schedule = await get_in_org(
        context.session, ScheduleType, context.org_id, type_id, "scheduleTypeId", "schedule type"
    )
    if schedule.archived:
        raise BadInput("scheduleTypeId", "the schedule type is archived")
    entry = await _entry(context, kind, target.id, schedule.id)
    if entry is None:
        entry = ScheduleTimelineEntry(organisation_id=context.org_id, target_kind=kind,
                                      target_id=target.id, schedule_type_id=schedule.id,
                                      start_ms=start_ms)
        context.session.add(entry)
    else:
        entry.start_ms = start_ms
    await context.session.flush()
    return _relation(entry)


async def unassign(context: RequestContext, kind: str, target_id: str | None,
                   type_id: str) -> dict[str, Any]:
    require_permission(context, "assign work schedules")
    target = await _target(context, kind, target_id)
    schedule = await get_in_org(
        context.session, ScheduleType, context.org_id, type_id, "scheduleTypeId", "schedule type"
    )
    entry = await _entry(context, kind, target.id, schedule.id)
    if entry is None:
        raise BadInput("scheduleTypeId", f"the schedule type is not on the {kind}'s timeline")
    relation = _relation(entry)
    await context.session.delete(entry)
    await context.session.flush()
    return relation


async def reset(context: RequestContext, kind: str, target_id: str | None) -> Any:
    require_permission(context, "assign work schedules")
    target = await _target(context, kind, target_id)
    await context.session.execute(delete(ScheduleTimelineEntry).where(
        ScheduleTimelineEntry.organisation_id == context.org_id,
        ScheduleTimelineEntry.target_kind == kind,
        ScheduleTimelineEntry.target_id == target.id,
    ))
    return target


@mutation.field("assignScheduleTimelineToPerson")
async def resolve_assign_person(_root: Any, info: Any, personId: str, scheduleTypeId: str,
                                startTime: int | None = None) -> dict[str, Any]:
    return await assign(info.context, TARGET_PERSON, personId, scheduleTypeId, startTime)


@mutation.field("assignScheduleTimelineToTag")
async def resolve_assign_tag(_root: Any, info: Any, tagId: str, scheduleTypeId: str,
                             startTime: int | None = None) -> dict[str, Any]:
    return await assign(info.context, TARGET_TAG, tagId, scheduleTypeId, startTime)


@mutation.field("assignScheduleTimelineToOrganisation")
async def resolve_assign_org(_root: Any, info: Any, scheduleTypeId: str,
                             startTime: int | None = None) -> dict[str, Any]:
    context: RequestContext = info.context
    return await assign(context, TARGET_ORGANISATION, context.org_id, scheduleTypeId, startTime)


@mutation.field("unassignScheduleTimelineFromPerson")
async def resolve_unassign_person(_root: Any, info: Any, personId: str,
                                  scheduleTypeId: str) -> dict[str, Any]:
    return await unassign(info.context, TARGET_PERSON, personId, scheduleTypeId)


@mutation.field("unassignScheduleTimelineFromTag")
async def resolve_unassign_tag(_root: Any, info: Any, tagId: str,
                               scheduleTypeId: str) -> dict[str, Any]:
    return await unassign(info.context, TARGET_TAG, tagId, scheduleTypeId)


@mutation.field("unassignScheduleTimelineFromOrganisation")
async def resolve_unassign_org(_root: Any, info: Any, scheduleTypeId: str) -> dict[str, Any]:
    context: RequestContext = info.context
    return await unassign(context, TARGET_ORGANISATION, context.org_id, scheduleTypeId)


@mutation.field("resetPersonScheduleTimelineRelations")
async def resolve_reset_person(_root: Any, info: Any, personId: str) -> Person:
    return await reset(info.context, TARGET_PERSON, personId)  # type: ignore[no-any-return]


@mutation.field("resetTagScheduleTimelineRelations")
async def resolve_reset_tag(_root: Any, info: Any, tagId: str) -> Tag:
    return await reset(info.context, TARGET_TAG, tagId)  # type: ignore[no-any-return]


@mutation.field("resetOrganisationScheduleTimelineRelations")
async def resolve_reset_org(_root: Any, info: Any) -> Organisation:
    context: RequestContext = info.context
    return await reset(context, TARGET_ORGANISATION, context.org_id)  # type: ignore[no-any-return]


# --- reading the timeline -------------------------------------------------------------------


async def _timeline(context: RequestContext, kind: str, target: Any) -> list[dict[str, Any]]:
    rows = await context.session.execute(
        select(ScheduleTimelineEntry, ScheduleType)
        .join(ScheduleType, ScheduleType.id == ScheduleTimelineEntry.schedule_type_id)
        .where(ScheduleTimelineEntry.organisation_id == context.org_id,
               ScheduleTimelineEntry.target_kind == kind,
               ScheduleTimelineEntry.target_id == target.id)
    )
    entries = sorted(rows.tuples(), key=lambda row: (row[0].start_ms or -1, row[0].id))
    path = [{"id": target.id, "collection": COLLECTIONS[kind], "name": target.name}]
    return [{"relationId": entry.id, "value": schedule, "operation": "assign", "path": path,
             "startTime": entry.start_ms} for entry, schedule in entries]


@organisation_type.field("relations")
def resolve_org_relations(organisation: Organisation, _info: Any) -> Organisation:
    return organisation


@tag_type.field("relations")
def resolve_tag_relations(tag: Tag, _info: Any) -> Tag:
    return tag


@organisation_relations.field("scheduleTimeline")
async def resolve_org_timeline(organisation: Organisation, info: Any) -> list[dict[str, Any]]:
    return await _timeline(info.context, TARGET_ORGANISATION, organisation)


@tag_relations.field("scheduleTimeline")
async def resolve_tag_timeline(tag: Tag, info: Any) -> list[dict[str, Any]]:
    return await _timeline(info.context, TARGET_TAG, tag)


@person_relations.field("scheduleTimeline")
async def resolve_person_timeline(person: Person, info: Any) -> list[dict[str, Any]]:
    return await _timeline(info.context, TARGET_PERSON, person)


async def _holders(context: RequestContext, schedule: ScheduleType, kind: str,
                   model: Any) -> list[dict[str, Any]]:
    rows = await context.session.execute(
        select(ScheduleTimelineEntry, model)
        .join(model, model.id == ScheduleTimelineEntry.target_id)
        .where(ScheduleTimelineEntry.organisation_id == context.org_id,
               ScheduleTimelineEntry.schedule_type_id == schedule.id,
               ScheduleTimelineEntry.target_kind == kind)
        .order_by(ScheduleTimelineEntry.id)
    )
    path = [{"id": schedule.id, "collection": "scheduleTypes", "name": schedule.name}]
    return [{"relationId": entry.id, "value": holder, "operation": "assign", "path": path,
             "startTime": entry.start_ms} for entry, holder in rows.tuples()]


@type_relations.field("scheduleTimelineOfOrganisation")
async def resolve_type_orgs(schedule: ScheduleType, info: Any) -> list[dict[str, Any]]:
    return await _holders(info.context, schedule, TARGET_ORGANISATION, Organisation)


@type_relations.field("scheduleTimelineOfTag")
async def resolve_type_tags(schedule: ScheduleType, info: Any) -> list[dict[str, Any]]:
    return await _holders(info.context, schedule, TARGET_TAG, Tag)


@type_relations.field("scheduleTimelineOfPerson")
async def resolve_type_persons(schedule: ScheduleType, info: Any) -> list[dict[str, Any]]:
    return await _holders(info.context, schedule, TARGET_PERSON, Person)


BINDABLES = [mutation, organisation_type, organisation_relations, tag_type, tag_relations,
             person_relations, type_relations]
