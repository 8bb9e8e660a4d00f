"""The caller's organisation's project or project category by id (NotFound naming the
argument when it is not one of theirs), and the category of projects added without one:
shared by the project resolvers and the legacy services."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import Project, ProjectCategory
from service.structure import oldest_category_or_new

DEFAULT_CATEGORY_NAME = "Projects"


async def project_by_id(context: RequestContext, project_id: str, argument: str = "id") -> Project:
    return await get_in_org(context.session, Project, context.org_id, project_id, argument,
                            "project")


async def project_category_by_id(
    context: RequestContext, category_id: str, argument: str = "id"
) -> ProjectCategory:
    return await get_in_org(context.session, ProjectCategory, context.org_id, category_id,
                            argument, "project category")


async def default_project_category(session: AsyncSession, org_id: str) -> ProjectCategory:
    """The category of projects added without one: the oldest category, created on first need."""
    category: ProjectCategory = await oldest_category_or_new(
        session, ProjectCategory, org_id, DEFAULT_CATEGORY_NAME
    )
    return category
