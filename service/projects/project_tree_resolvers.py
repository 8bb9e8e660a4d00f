"""Projects as a tree: a project's parent, and moving a project (with its subtree) under
another parent, levels following. Admins move projects."""

from __future__ import annotations

from typing import Any

from ariadne import MutationType, ObjectType
from sqlalchemy import select

from service.access import PROJECTS, requirer
from service.graphql.context import RequestContext
from service.lookup import by_id
from service.models import Project
from service.structure import check_new_parent, children_map, descendants, parent_map

require_permission = requirer(PROJECTS)

mutation = MutationType()
project_type = ObjectType("SvcProject")


@project_type.field("parent")
async def resolve_project_parent(project: Project, info: Any) -> Project | None:
    if project.parent_id is None:
        return None
    context: RequestContext = info.context
    return await context.session.get(Project, project.parent_id)


@mutation.field("editProjectParent")
async def resolve_edit_project_parent(
    _root: Any, info: Any, id: str, parentId: str | None = None
) -> Project:
    """Moves the project (and its subtree) under another parent; levels follow."""
    context: RequestContext = info.context
    require_permission(context)
    session = context.session
    project = await by_id(context, Project, id)
    parent = await by_id(context, Project, parentId, "parentId") if parentId is not None else None
    parents = await parent_map(session, Project, context.org_id)
    check_new_parent(parents, project.id, parentId, "project")
    project.parent_id = parentId
    project.level = parent.level + 1 if parent else 0
    parents[project.id] = parentId
    subtree = descendants(parents, [project.id])
    if subtree:
        loaded = {p.id: p for p in await session.scalars(
            select(Project).where(Project.id.in_(subtree))
        )}
        children = children_map(parents)
        queue = [project]
        while queue:
            current = queue.pop(0)
            for child_id in children.get(current.id, []):
                child = loaded[child_id]
                child.level = current.level + 1
                queue.append(child)
    return project


BINDABLES = [mutation, project_type]
