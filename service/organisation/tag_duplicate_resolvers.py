"""duplicateTag: a copy of a tag — its category, color, settings (description, validity
period, time settings, localisation, …) and managers — under the same parent or under
`parentId` (then in the parent's category). The items it is put on and its subtags are not
copied."""

from __future__ import annotations

from typing import Any

from ariadne import MutationType
from sqlalchemy import select

from service.access import TAGS, require
from service.graphql.context import RequestContext
from service.lookup import by_id
from service.models import Tag, TagManager

mutation = MutationType()


@mutation.field("duplicateTag")
async def resolve_duplicate_tag(
    _root: Any, info: Any, id: str, name: str, parentId: str | None = None
) -> Tag:
    context: RequestContext = info.context
    require(context, TAGS, "duplicate a tag")
    session, org_id = context.session, context.org_id
    source = await by_id(context, Tag, id)
    if parentId is not None:
        parent: Tag | None = await by_id(context, Tag, parentId, "parentId")
    elif source.parent_id is not None:
        parent = await session.get(Tag, source.parent_id)
    else:
        parent = None
    copy = Tag(
        organisation_id=org_id,
        name=name,
        category_id=parent.category_id if parent is not None else source.category_id,
        parent_id=parent.id if parent is not None else None,
        level=parent.level + 1 if parent is not None else 0,
        color=source.color,
        archived=False,
        settings=dict(source.settings or {}),
        created_ms=context.now_ms,
    )
    session.add(copy)
    await session.flush()
    for person_id in await session.scalars(
        select(TagManager.person_id).where(TagManager.organisation_id == org_id,
                                           TagManager.tag_id == source.id)
    ):
        session.add(TagManager(organisation_id=org_id, tag_id=copy.id, person_id=person_id))
    await session.flush()
    await session.refresh(copy, ["category"])
    return copy


BINDABLES = [mutation]
