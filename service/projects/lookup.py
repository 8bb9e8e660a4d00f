"""The category of projects added without one: shared by the project resolvers and the legacy
services."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from service.models import ProjectCategory
from service.structure import oldest_category_or_new

DEFAULT_CATEGORY_NAME = "Projects"


async def default_project_category(session: AsyncSession, org_id: str) -> ProjectCategory:
    """The category of projects added without one: the oldest category, created on first need."""
    category: ProjectCategory = await oldest_category_or_new(
        session, ProjectCategory, org_id, DEFAULT_CATEGORY_NAME
    )
    return category
