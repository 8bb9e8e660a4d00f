"""The services on companies (top-level projects) and projects: company.create, company.get,
company.list, project.list."""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import IntegrityError

from service.errors import PermissionDenied
from service.legacy.errors import LegacyError
from service.legacy.lookups import ProjectTree, find_company, project_tree
from service.legacy.request import (
    Handler,
    LegacyRequest,
    active_filter,
    company_filter_value,
    identifier,
)
from service.legacy.values import name_field
from service.legacy.xids import validate_xid
from service.models import Project
from service.projects import default_project_category


async def company_dict(
    request: LegacyRequest, company: Project, tree: ProjectTree
) -> dict[str, Any]:
    return {
        **(await request.xids("projects").ref(company.id) or {}),
        "name": company.name,
        "active": not company.archived,
        "projects": {"count": len(tree.descendants(company.id))},
    }


async def company_create(request: LegacyRequest) -> dict[str, Any]:
    data = request.member("company", required=True)
    name = name_field(data, "company")
    xid = validate_xid(data.get("xid"), "company")
    if not request.context.is_admin:
        raise PermissionDenied("only an administrator may create companies")
    xids = request.xids("projects")
    if xid is not None:
        holder = await xids.holder(xid)
        if holder is not None:
            if await request.session.get(Project, holder) is not None:
                raise LegacyError(f"The xid {xid!r} is already used by another company or project")
            await xids.release(holder)
    category = await default_project_category(request.session, request.org_id)
    company = Project(
        organisation_id=request.org_id,
        name=name,
        parent_id=None,
        category_id=category.id,
        level=0,
        archived=False,
        availability=None,
        created_ms=request.context.now_ms,
    )
    request.session.add(company)
    await request.session.flush()
    if xid is not None:
        try:
            await xids.claim(xid, company.id, request.context.now_ms)
        except IntegrityError:
            raise LegacyError(
                f"The xid {xid!r} is already used by another company or project"
            ) from None
    request.audit(
        "addProject", {"name": name, "xid": xid, "legacyService": "company.create"}, company.id
    )
    return {"xid": xid} if xid is not None else {"id": company.id}


async def company_get(request: LegacyRequest) -> dict[str, Any]:
    company = await find_company(request, identifier(request, "company"), "company")
    tree = await project_tree(request)
    return {"company": await company_dict(request, company, tree)}


async def company_list(request: LegacyRequest) -> dict[str, Any]:
    active = active_filter(request, "company")
    tree = await project_tree(request)
    companies = [
        await company_dict(request, tree.projects[company_id], tree)
        for company_id in tree.children.get(None, [])
        if active is None or active != tree.projects[company_id].archived
    ]
    return {"companies": companies}


async def project_list(request: LegacyRequest) -> dict[str, Any]:
    active = active_filter(request, "project")
    tree = await project_tree(request)
    company_value = company_filter_value(request, "project")
    if company_value is not None:
        company = await find_company(request, company_value, "company")
        ids = set(tree.descendants(company.id))
    else:
        top_level = set(tree.children.get(None, []))
        ids = {project_id for project_id in tree.projects if project_id not in top_level}
    xids = request.xids("projects")
    projects = []
    for project in tree.projects.values():
        if project.id not in ids or (active is not None and active == project.archived):
            continue
        projects.append(
            {
                **(await xids.ref(project.id) or {}),
                "name": project.name,
                "active": not project.archived,
                "level": project.level,
                "company": await xids.ref(tree.company_of(project.id)),
                "parent": await xids.ref(project.parent_id),
            }
        )
    return {"projects": projects}


SERVICES: dict[str, Handler] = {
    "company.create": company_create,
    "company.get": company_get,
    "company.list": company_list,
    "project.list": project_list,
}
