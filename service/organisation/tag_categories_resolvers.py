"""Tag categories: everyone in the organisation reads them, admins add, rename and delete
them (not while tags belong to them) and name their levels."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ariadne import MutationType, ObjectType, QueryType
from sqlalchemy import func, select

from service.access import TAGS, requirer
from service.errors import BadInput, RuleViolation
from service.graphql.context import RequestContext
from service.lookup import by_id
from service.models import Tag, TagCategory
from service.structure import categories_by_name

require_permission = requirer(TAGS)

query = QueryType()
mutation = MutationType()
category_type = ObjectType("SvcTagCategory")


def _check_level_names(level_names: Sequence[str | None] | None) -> list[str]:
    names: list[str] = []
    for index, value in enumerate(level_names or []):
        if value is None:
            raise BadInput(f"levelNames[{index}]", "must be a string, not null")
        names.append(value)
    return names


@query.field("getTagCategories")
async def resolve_get_tag_categories(_root: Any, info: Any) -> list[TagCategory]:
    context: RequestContext = info.context
    return await categories_by_name(context.session, TagCategory, context.org_id)


@category_type.field("levelNames")
def resolve_category_level_names(category: TagCategory, _info: Any) -> list[str]:
    return list(category.level_names or [])


@mutation.field("addTagCategory")
async def resolve_add_tag_category(_root: Any, info: Any, name: str) -> TagCategory:
    context: RequestContext = info.context
    require_permission(context)
    category = TagCategory(organisation_id=context.org_id, name=name, level_names=[])
    context.session.add(category)
    await context.session.flush()
    return category


@mutation.field("deleteTagCategory")
async def resolve_delete_tag_category(_root: Any, info: Any, id: str) -> TagCategory:
    context: RequestContext = info.context
    require_permission(context)
    category = await by_id(context, TagCategory, id, "id")
    used = await context.session.scalar(
        select(func.count()).select_from(Tag).where(Tag.category_id == category.id)
    )
    if used:
        raise RuleViolation(
            f'Tag category "{category.name}" cannot be deleted: {used} tag'
            f"{'s' if used != 1 else ''} belong{'s' if used == 1 else ''} to it"
        )
    await context.session.delete(category)
    return category


@mutation.field("editTagCategoryName")
async def resolve_edit_tag_category_name(_root: Any, info: Any, id: str, name: str) -> TagCategory:
    context: RequestContext = info.context
    require_permission(context)
    category = await by_id(context, TagCategory, id, "id")
    category.name = name
    return category


@mutation.field("editTagCategoryLevelNames")
async def resolve_edit_tag_category_level_names(
    _root: Any, info: Any, id: str, levelNames: list[str | None] | None = None
) -> TagCategory:
    context: RequestContext = info.context
    require_permission(context)
    category = await by_id(context, TagCategory, id, "id")
    category.level_names = _check_level_names(levelNames)
    return category


BINDABLES = [query, mutation, category_type]
