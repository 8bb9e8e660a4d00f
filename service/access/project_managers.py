"""Who manages a project: its own managers and those of every ancestor project.

Used by the approval workflow (approver type "Project managers": a parent project's manager
also approves its subprojects) and by the project resolvers (a manager may edit the projects
they manage).
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from service.models import Project, ProjectManager
from service.structure import ancestors, descendants, parent_map


async def project_manager_ids(session: AsyncSession, org_id: str, project_id: str) -> set[str]:
    """Ids of the people managing the project directly or through an ancestor project."""
    parents = await parent_map(session, Project, org_id)
    if project_id not in parents:
        return set()
    chain = [project_id, *ancestors(parents, project_id)]
    rows = await session.scalars(
        select(ProjectManager.person_id).where(
            ProjectManager.organisation_id == org_id, ProjectManager.project_id.in_(chain)
        )
    )
    return set(rows)


async def managed_project_ids(session: AsyncSession, org_id: str, person_id: str) -> set[str]:
    """Ids of the projects a person manages, directly or as manager of an ancestor."""
    direct = set(
        await session.scalars(
            select(ProjectManager.project_id).where(
                ProjectManager.organisation_id == org_id, ProjectManager.person_id == person_id
            )
        )
    )
    if not direct:
        return set()
    parents = await parent_map(session, Project, org_id)
    return direct | set(descendants(parents, direct))
