"""Deleting projects (admins): refused while time records, expense records or subprojects use
them; their managers and tags go with them, and their tasks stay, planned on no project."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ariadne import MutationType
from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from service.access import PROJECTS, requirer
from service.errors import RuleViolation
from service.graphql.context import RequestContext
from service.lookup import by_id, get_many_in_org
from service.models import (
    ExpenseRecord,
    Project,
    ProjectManager,
    ProjectTag,
    Task,
    time_record_projects,
)
from service.structure import check_unique_ids

require_permission = requirer(PROJECTS)

mutation = MutationType()


async def _references(
    session: AsyncSession, org_id: str, projects: Sequence[Project]
) -> None:
    """Refuses deleting projects that time records, expense records or subprojects use."""
    ids = [project.id for project in projects]
    deleting = set(ids)
    for project in projects:
        problems: list[str] = []
        records = await session.scalar(
            select(func.count()).select_from(time_record_projects).where(
                time_record_projects.c.project_id == project.id
            )
        )
        if records:
            problems.append(f"{records} time record{'s' if records != 1 else ''}")
        expenses = await session.scalar(
            select(func.count()).select_from(ExpenseRecord).where(
                ExpenseRecord.organisation_id == org_id, ExpenseRecord.project_id == project.id
            )
        )
        if expenses:
            problems.append(f"{expenses} expense record{'s' if expenses != 1 else ''}")
        children = [
            child
            for child in await session.scalars(
                select(Project.id).where(
                    Project.organisation_id == org_id, Project.parent_id == project.id
                )
            )
            if child not in deleting
        ]
        if children:
            problems.append(f"{len(children)} subproject{'s' if len(children) != 1 else ''}")
        if problems:
            raise RuleViolation(
                f'Project "{project.name}" ({project.id}) cannot be deleted: it is used by '
                + ", ".join(problems)
            )


async def _delete_projects(session: AsyncSession, org_id: str, projects: Sequence[Project]) -> None:
    ids = [project.id for project in projects]
    await session.execute(delete(ProjectManager).where(ProjectManager.project_id.in_(ids)))
    await session.execute(delete(ProjectTag).where(ProjectTag.project_id.in_(ids)))
    await session.execute(
        update(Task)
        .where(Task.organisation_id == org_id, Task.project_id.in_(ids))
        .values(project_id=None)
    )
    # Children first: a parent deleted in the same batch must not be referenced any more.
    levels = sorted(projects, key=lambda p: -p.level)
    for project in levels:
        await session.delete(project)
        await session.flush()


@mutation.field("deleteProject")
async def resolve_delete_project(
    _root: Any, info: Any, id: str, check: bool | None = None
) -> Project:
    context: RequestContext = info.context
    require_permission(context)
    project = await by_id(context, Project, id)
    await _references(context.session, context.org_id, [project])
    if check:
        context.skip_audit = True
        return project
    await _delete_projects(context.session, context.org_id, [project])
    return project


@mutation.field("deleteProjects")
async def resolve_delete_projects(_root: Any, info: Any, ids: list[str]) -> list[Project]:
    context: RequestContext = info.context
    require_permission(context)
    check_unique_ids(ids, "ids")
    projects = await get_many_in_org(context.session, Project, context.org_id, ids, "ids",
                                     "project")
    await _references(context.session, context.org_id, projects)
    await _delete_projects(context.session, context.org_id, projects)
    return projects


BINDABLES = [mutation]
