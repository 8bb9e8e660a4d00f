"""Finding what a request names, by `id` or `xid`, in the caller's organisation (a missing one
is `LegacyNotFound`), and the project tree: companies (top-level projects) and the projects
below them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select

from service.legacy.errors import LegacyNotFound
from service.legacy.request import LegacyRequest
from service.models import Project


@dataclass
class ProjectTree:
    projects: dict[str, Project]
    children: dict[str | None, list[str]]

    def descendants(self, project_id: str) -> list[str]:
        found: list[str] = []
        stack = list(self.children.get(project_id, []))
        while stack:
            current = stack.pop()
            found.append(current)
            stack.extend(self.children.get(current, []))
        return found

    def company_of(self, project_id: str) -> str:
        current = self.projects[project_id]
        seen = {current.id}
        while current.parent_id is not None and current.parent_id in self.projects:
            current = self.projects[current.parent_id]
            if current.id in seen:
                break
            seen.add(current.id)
        return current.id


async def project_tree(request: LegacyRequest) -> ProjectTree:
    rows = await request.session.scalars(
        select(Project)
        .where(Project.organisation_id == request.org_id)
        .order_by(func.lower(Project.name), Project.id)
    )
    projects = {project.id: project for project in rows.unique()}
    children: dict[str | None, list[str]] = {}
    for project in projects.values():
        parent = project.parent_id if project.parent_id in projects else None
        children.setdefault(parent, []).append(project.id)
    return ProjectTree(projects, children)


async def resolve_ref(
    request: LegacyRequest, kind: str, value: Any, member: str
) -> tuple[str | None, dict[str, Any]]:
    ref = value if isinstance(value, dict) else {}
    return await request.xids(kind).entity_id(value, member), ref


async def find_company(request: LegacyRequest, value: Any, member: str) -> Project:
    entity_id, ref = await resolve_ref(request, "projects", value, member)
    company = None
    if entity_id is not None:
        company = (
            await request.session.scalars(
                select(Project).where(
                    Project.id == entity_id,
                    Project.organisation_id == request.org_id,
                    Project.parent_id.is_(None),
                )
            )
        ).one_or_none()
    if company is None:
        raise LegacyNotFound("Company", ref)
    return company  # type: ignore[no-any-return]


async def find_in_org(
    request: LegacyRequest, model: type[Any], kind: str, value: Any, member: str, what: str
) -> Any:
    entity_id, ref = await resolve_ref(request, kind, value, member)
    found = None
    if entity_id is not None:
        found = (
            await request.session.scalars(
                select(model).where(model.id == entity_id, model.organisation_id == request.org_id)
            )
        ).unique().one_or_none()
    if found is None:
        raise LegacyNotFound(what, ref)
    return found
