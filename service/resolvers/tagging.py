"""The tagging of people and projects (from a start time on, when given): admins tag, untag
and reset a tag's people or projects."""

from __future__ import annotations

from typing import Any

from ariadne import MutationType
from sqlalchemy import delete, select

from service import permissions
from service.errors import BadInput
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import Person, PersonTag, Project, ProjectTag, Tag
from service.structure import raw_relation
from service.tag_lookup import tag_in_org

require_permission = permissions.requirer(permissions.TAGS)

mutation = MutationType()


def _person_relation(row: PersonTag) -> dict[str, Any]:
    return raw_relation(row.id, row.tag_id, "tagged", row.person_id, "taggedBy", row.start_ms)


def _project_relation(row: ProjectTag) -> dict[str, Any]:
    return raw_relation(row.id, row.tag_id, "tagged", row.project_id, "taggedBy", row.start_ms)


async def _active_tag(context: RequestContext, tag_id: str) -> Tag:
    tag = await tag_in_org(context, tag_id, "tagId")
    if tag.archived:
        raise BadInput("tagId", f'tag "{tag.name}" is archived')
    return tag


@mutation.field("tagPerson")
async def resolve_tag_person(
    _root: Any, info: Any, tagId: str, personId: str, startTime: int | None = None
) -> dict[str, Any]:
    """The person carries the tag (from `startTime` on, when given); tagging again moves the
    start."""
    context: RequestContext = info.context
    require_permission(context)
    session, org_id = context.session, context.org_id
    tag = await _active_tag(context, tagId)
    person = await get_in_org(session, Person, org_id, personId, "personId", "person")
    row = (
        await session.scalars(
            select(PersonTag).where(PersonTag.tag_id == tag.id, PersonTag.person_id == person.id)
        )
    ).first()
    if row is None:
        row = PersonTag(organisation_id=org_id, tag_id=tag.id, person_id=person.id)
        session.add(row)
    row.start_ms = startTime
    await session.flush()
    return _person_relation(row)


@mutation.field("untagPerson")
async def resolve_untag_person(
    _root: Any, info: Any, tagId: str, personId: str
) -> dict[str, Any]:
    context: RequestContext = info.context
    require_permission(context)
    session = context.session
    tag = await tag_in_org(context, tagId, "tagId")
    person = await get_in_org(session, Person, context.org_id, personId, "personId", "person")
    row = (
        await session.scalars(
            select(PersonTag).where(PersonTag.tag_id == tag.id, PersonTag.person_id == person.id)
        )
    ).first()
    if row is None:
        raise BadInput("personId", f'{person.name} does not carry tag "{tag.name}"')
    relation = _person_relation(row)
    await session.delete(row)
    return relation


@mutation.field("resetTaggedPersons")
async def resolve_reset_tagged_persons(_root: Any, info: Any, tagId: str) -> Tag:
    context: RequestContext = info.context
    require_permission(context)
    tag = await tag_in_org(context, tagId, "tagId")
    await context.session.execute(delete(PersonTag).where(PersonTag.tag_id == tag.id))
    return tag


@mutation.field("tagProject")
async def resolve_tag_project(
    _root: Any, info: Any, tagId: str, projectId: str, startTime: int | None = None
) -> dict[str, Any]:
    context: RequestContext = info.context
    require_permission(context)
    session, org_id = context.session, context.org_id
    tag = await _active_tag(context, tagId)
    project = await get_in_org(session, Project, org_id, projectId, "projectId", "project")
    row = (
        await session.scalars(
            select(ProjectTag).where(
                ProjectTag.tag_id == tag.id, ProjectTag.project_id == project.id
            )
        )
    ).first()
    if row is None:
        row = ProjectTag(organisation_id=org_id, tag_id=tag.id, project_id=project.id)
        session.add(row)
    row.start_ms = startTime
    await session.flush()
    return _project_relation(row)


@mutation.field("untagProject")
async def resolve_untag_project(
    _root: Any, info: Any, tagId: str, projectId: str
) -> dict[str, Any]:
    context: RequestContext = info.context
    require_permission(context)
    session = context.session
    tag = await tag_in_org(context, tagId, "tagId")
    project = await get_in_org(session, Project, context.org_id, projectId, "projectId",
                               "project")
    row = (
        await session.scalars(
            select(ProjectTag).where(
                ProjectTag.tag_id == tag.id, ProjectTag.project_id == project.id
            )
        )
    ).first()
    if row is None:
        raise BadInput("projectId", f'project "{project.name}" does not carry tag "{tag.name}"')
    relation = _project_relation(row)
    await session.delete(row)
    return relation


@mutation.field("resetTaggedProjects")
async def resolve_reset_tagged_projects(_root: Any, info: Any, tagId: str) -> Tag:
    context: RequestContext = info.context
    require_permission(context)
    tag = await tag_in_org(context, tagId, "tagId")
    await context.session.execute(delete(ProjectTag).where(ProjectTag.tag_id == tag.id))
    return tag


BINDABLES = [mutation]
