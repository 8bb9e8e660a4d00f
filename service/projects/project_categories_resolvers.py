"""Project categories: reading them, and adding, deleting (refused while projects belong to
it), renaming a category and naming its levels (admins)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ariadne import MutationType, ObjectType, QueryType
from sqlalchemy import func, select

from service.access import PROJECTS, requirer
from service.errors import BadInput, RuleViolation
from service.graphql.context import RequestContext
from service.lookup import by_id
from service.models import Project, ProjectCategory
from service.structure import categories_by_name

require_permission = requirer(PROJECTS)

query = QueryType()
mutation = MutationType()
category_type = ObjectType("SvcProjectCategory")


@query.field("getProjectCategories")
async def resolve_get_project_categories(_root: Any, info: Any) -> list[ProjectCategory]:
    context: RequestContext = info.context
    return await categories_by_name(context.session, ProjectCategory, context.org_id)


@category_type.field("levelNames")
def resolve_category_level_names(category: ProjectCategory, _info: Any) -> list[str]:
    return list(category.level_names or [])


def _check_level_names(level_names: Sequence[str | None] | None) -> list[str]:
    names: list[str] = []
    for index, value in enumerate(level_names or []):
        if value is None:
            raise BadInput(f"levelNames[{index}]", "must be a string, not null")
        names.append(value)
    return names


@mutation.field("addProjectCategory")
async def resolve_add_project_category(_root: Any, info: Any, name: str) -> ProjectCategory:
    context: RequestContext = info.context
    require_permission(context)
    category = ProjectCategory(organisation_id=context.org_id, name=name, level_names=[])
    context.session.add(category)
    await context.session.flush()
    return category


@mutation.field("deleteProjectCategory")
async def resolve_delete_project_category(_root: Any, info: Any, id: str) -> ProjectCategory:
    context: RequestContext = info.context
    require_permission(context)
    category = await by_id(context, ProjectCategory, id)
    used = await context.session.scalar(
        select(func.count()).select_from(Project).where(
            Project.organisation_id == context.org_id, Project.category_id == category.id
        )
    )
    if used:
        raise RuleViolation(
            f'Project category "{category.name}" cannot be deleted: {used} project'
            f"{'s' if used != 1 else ''} belong{'s' if used == 1 else ''} to it"
        )
    await context.session.delete(category)
    return category


@mutation.field("editProjectCategoryName")
async def resolve_edit_project_category_name(
    _root: Any, info: Any, id: str, name: str
) -> ProjectCategory:
    context: RequestContext = info.context
    require_permission(context)
    category = await by_id(context, ProjectCategory, id)
    category.name = name
    return category


@mutation.field("editProjectCategoryLevelNames")
async def resolve_edit_project_category_level_names(
    _root: Any, info: Any, id: str, levelNames: list[str | None] | None = None
) -> ProjectCategory:
    context: RequestContext = info.context
    require_permission(context)
    category = await by_id(context, ProjectCategory, id)
    category.level_names = _check_level_names(levelNames)
    return category


BINDABLES = [query, mutation, category_type]
