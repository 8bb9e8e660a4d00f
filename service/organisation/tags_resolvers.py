"""Tags: a tree inside each tag category; everyone in the organisation reads them, admins
edit them (adding, deleting, archiving, renaming, moving under another parent)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ariadne import MutationType, ObjectType, QueryType
from sqlalchemy import Select, delete, func, select

from service.access import TAGS, requirer
from service.errors import BadInput, RuleViolation
from service.graphql.context import RequestContext
from service.graphql.filters import filter_clause
from service.lookup import by_id, get_many_in_org
from service.models import PersonTag, ProjectTag, Tag, TagCategory
from service.organisation.tag_lookup import default_tag_category
from service.structure import (
    active_clause,
    bind_archiving,
    bind_listing,
    check_new_parent,
    check_unique_ids,
    children_map,
    descendants,
    name_contains,
    parent_map,
)

require_permission = requirer(TAGS)

query = QueryType()
mutation = MutationType()
tag_type = ObjectType("SvcTag")


async def _tag_select(
    context: RequestContext,
    filter: Sequence[Mapping[str, Any] | None] | None,
    archived: bool | None,
    category_id: str | None,
) -> Select[Any]:
    org_id = context.org_id
    conditions = {
        "id": lambda v: Tag.id == v,
        "notId": lambda v: Tag.id != v,
        "name": lambda v: name_contains(Tag.name, v),
        "level": lambda v: Tag.level == v,
        "archived": lambda v: Tag.archived.is_(bool(v)),
        "categoryId": lambda v: Tag.category_id == v,
        "taggedPersonId": lambda v: Tag.id.in_(
            select(PersonTag.tag_id).where(
                PersonTag.organisation_id == org_id, PersonTag.person_id == v
            )
        ),
        "taggedProjectId": lambda v: Tag.id.in_(
            select(ProjectTag.tag_id).where(
                ProjectTag.organisation_id == org_id, ProjectTag.project_id == v
            )
        ),
    }
    statement = select(Tag).where(Tag.organisation_id == org_id, filter_clause(filter, conditions))
    active = active_clause(Tag.archived, archived, filter)
    if active is not None:
        statement = statement.where(active)
    if category_id is not None:
        statement = statement.where(Tag.category_id == category_id)
    return statement.order_by(func.lower(Tag.name), Tag.id)


async def _set_archived(
    context: RequestContext, ids: Sequence[str], argument: str, archived: bool, subtree: bool
) -> list[Tag]:
    require_permission(context)
    session = context.session
    check_unique_ids(list(ids), argument)
    tags = await get_many_in_org(session, Tag, context.org_id, list(ids), argument, "tag")
    targets: dict[str, Tag] = {tag.id: tag for tag in tags}
    if subtree:
        parents = await parent_map(session, Tag, context.org_id)
        extra = [i for i in descendants(parents, targets) if i not in targets]
        if extra:
            for tag in await session.scalars(select(Tag).where(Tag.id.in_(extra))):
                targets.setdefault(tag.id, tag)
    for tag in targets.values():
        tag.archived = archived
    return list(targets.values())


async def _delete_tags(context: RequestContext, tags: Sequence[Tag]) -> None:
    session = context.session
    deleting = {tag.id for tag in tags}
    for tag in tags:
        child_ids = await session.scalars(select(Tag.id).where(Tag.parent_id == tag.id))
        children = [child for child in child_ids if child not in deleting]
        if children:
            raise RuleViolation(
                f'Tag "{tag.name}" ({tag.id}) cannot be deleted: it has {len(children)} '
                f"subtag{'s' if len(children) != 1 else ''}"
            )
    ids = sorted(deleting)
    await session.execute(delete(PersonTag).where(PersonTag.tag_id.in_(ids)))
    await session.execute(delete(ProjectTag).where(ProjectTag.tag_id.in_(ids)))
    for tag in sorted(tags, key=lambda t: -t.level):
        await session.delete(tag)
        await session.flush()


# -- queries ---------------------------------------------------------------------------------


@query.field("getTag")
async def resolve_get_tag(_root: Any, info: Any, id: str) -> Tag:
    return await by_id(info.context, Tag, id)


bind_listing(
    query,
    Tag.id,
    lambda context, args: _tag_select(
        context, args.get("filter"), args.get("archived"), args.get("categoryId")
    ),
    get="getTags",
    count="countTags",
    ids="filterTagIds",
)


@tag_type.field("category")
async def resolve_tag_category(tag: Tag, info: Any) -> TagCategory:
    if tag.category is not None:
        return tag.category
    context: RequestContext = info.context
    return await default_tag_category(context.session, context.org_id)


@tag_type.field("parent")
async def resolve_tag_parent(tag: Tag, info: Any) -> Tag | None:
    if tag.parent_id is None:
        return None
    context: RequestContext = info.context
    return await context.session.get(Tag, tag.parent_id)


# -- mutations -------------------------------------------------------------------------------


@mutation.field("addTag")
async def resolve_add_tag(
    _root: Any, info: Any, name: str, categoryId: str | None = None,
    parentId: str | None = None, color: str | None = None,
) -> Tag:
    """A subtag (parentId) lives in its parent's category; level = depth."""
    context: RequestContext = info.context
    require_permission(context)
    session, org_id = context.session, context.org_id
    parent = await by_id(context, Tag, parentId, "parentId") if parentId is not None else None
    if categoryId is not None:
        category = await by_id(context, TagCategory, categoryId, "categoryId")
        if parent is not None and parent.category_id != category.id:
            raise BadInput("categoryId", "a subtag must be in its parent tag's category")
    elif parent is not None and parent.category is not None:
        category = parent.category
    else:
        category = await default_tag_category(session, org_id)
    tag = Tag(
        organisation_id=org_id,
        name=name,
        category_id=category.id,
        parent_id=parent.id if parent else None,
        level=parent.level + 1 if parent else 0,
        color=color,
        archived=False,
        settings={},
        created_ms=context.now_ms,
    )
    session.add(tag)
    await session.flush()
    await session.refresh(tag, ["category"])
    return tag


@mutation.field("deleteTag")
async def resolve_delete_tag(_root: Any, info: Any, id: str, check: bool | None = None) -> Tag:
    """Refused while the tag has subtags; its taggings go with it."""
    context: RequestContext = info.context
    require_permission(context)
    tag = await by_id(context, Tag, id)
    if check:
        child = await context.session.scalar(select(Tag.id).where(Tag.parent_id == tag.id))
        if child is not None:
            raise RuleViolation(f'Tag "{tag.name}" ({tag.id}) cannot be deleted: it has subtags')
        context.skip_audit = True
        return tag
    await _delete_tags(context, [tag])
    return tag


@mutation.field("deleteTags")
async def resolve_delete_tags(_root: Any, info: Any, ids: list[str]) -> list[Tag]:
    context: RequestContext = info.context
    require_permission(context)
    check_unique_ids(ids, "ids")
    tags = await get_many_in_org(context.session, Tag, context.org_id, ids, "ids", "tag")
    await _delete_tags(context, tags)
    return tags


bind_archiving(mutation, _set_archived, "Tag")


@mutation.field("editTagName")
async def resolve_edit_tag_name(_root: Any, info: Any, id: str, name: str) -> Tag:
    require_permission(info.context)
    tag = await by_id(info.context, Tag, id)
    tag.name = name
    return tag


@mutation.field("editTagColor")
async def resolve_edit_tag_color(_root: Any, info: Any, id: str, color: str | None = None) -> Tag:
    require_permission(info.context)
    tag = await by_id(info.context, Tag, id)
    tag.color = color
    return tag


@mutation.field("editTagParent")
async def resolve_edit_tag_parent(
    _root: Any, info: Any, id: str, parentId: str | None = None
) -> Tag:
    context: RequestContext = info.context
    require_permission(context)
    session = context.session
    tag = await by_id(context, Tag, id)
    parent = await by_id(context, Tag, parentId, "parentId") if parentId is not None else None
    if parent is not None and parent.category_id != tag.category_id:
        raise BadInput("parentId", "the parent tag is in another tag category")
    parents = await parent_map(session, Tag, context.org_id)
    check_new_parent(parents, tag.id, parentId, "tag")
    tag.parent_id = parentId
    tag.level = parent.level + 1 if parent else 0
    parents[tag.id] = parentId
    subtree = descendants(parents, [tag.id])
    if subtree:
        loaded = {t.id: t for t in await session.scalars(select(Tag).where(Tag.id.in_(subtree)))}
        children = children_map(parents)
        queue = [tag]
        while queue:
            current = queue.pop(0)
            for child_id in children.get(current.id, []):
                loaded[child_id].level = current.level + 1
                queue.append(loaded[child_id])
    return tag


BINDABLES = [query, mutation, tag_type]
