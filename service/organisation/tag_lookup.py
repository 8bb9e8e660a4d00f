"""An organisation's tags and tag categories as the resolvers find them: by id (refused when
missing or foreign), and the default category of tags added without one."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import Tag, TagCategory
from service.structure import oldest_category_or_new

DEFAULT_CATEGORY_NAME = "Tags"


async def default_tag_category(session: AsyncSession, org_id: str) -> TagCategory:
    """The category of tags added without one: the oldest category, created on first need."""
    category: TagCategory = await oldest_category_or_new(
        session, TagCategory, org_id, DEFAULT_CATEGORY_NAME
    )
    return category


async def tag_in_org(context: RequestContext, tag_id: str | None, argument: str = "id") -> Tag:
    return await get_in_org(context.session, Tag, context.org_id, tag_id, argument, "tag")


async def tag_category_in_org(
    context: RequestContext, category_id: str, argument: str
) -> TagCategory:
    return await get_in_org(context.session, TagCategory, context.org_id, category_id, argument,
                            "tag category")
