"""The default category of tags added without one."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from service.models import TagCategory
from service.structure import oldest_category_or_new

DEFAULT_CATEGORY_NAME = "Tags"


async def default_tag_category(session: AsyncSession, org_id: str) -> TagCategory:
    """The category of tags added without one: the oldest category, created on first need."""
    category: TagCategory = await oldest_category_or_new(
        session, TagCategory, org_id, DEFAULT_CATEGORY_NAME
    )
    return category
