"""Saved reports and their folders: who sees and edits what, and a run that reuses the
inline report engine (service/reports/inline_report.py) and keeps its rows for getReportResult.

Access: a folder is its owner's; the persons it is shared with see it and its reports and
may run them; only its owner (or a role managing reports) edits, shares or deletes it and
its reports. A run covers the records the *runner* may see, always: sharing a report shares
its parameters, never another person's visibility. A folder's filters are a chain every one
of its reports also matches, its period the default of a report that names none (a run's
period comes first), its recordScope the only record type its reports cover.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from plumbing.ids import new_id
from service.access import MANAGE, REPORTS, VIEW, has, require
from service.errors import BadInput, PermissionDenied
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import Person, Project
from service.reports.inline_report import check_filters, period_bounds, run_inline_report
from service.reports.models import Report, ReportFolder, ReportResult

# how long getReportResult keeps a run's rows
RESULT_TTL_MS = 24 * 60 * 60 * 1000
RECORD_SCOPES = ("time", "absence")


def manages_reports(context: RequestContext) -> bool:
    return has(context, REPORTS, MANAGE)


def require_reports(context: RequestContext, what: str) -> None:
    require(context, REPORTS, what, VIEW)


def sees(context: RequestContext, folder: ReportFolder) -> bool:
    person = context.person.id
    return manages_reports(context) or folder.owner_id == person or person in (
        folder.shared_with or [])


def edits(context: RequestContext, folder: ReportFolder) -> bool:
    return manages_reports(context) or folder.owner_id == context.person.id


async def folder_for(context: RequestContext, folder_id: str, argument: str = "id", *,
                     edit: bool) -> ReportFolder:
    require_reports(context, "use reports")
    folder = await get_in_org(context.session, ReportFolder, context.org_id, folder_id,
                              argument, "report folder")
    if not sees(context, folder):
        raise PermissionDenied("this report folder is neither yours nor shared with you")
    if edit and not edits(context, folder):
        raise PermissionDenied("only the folder's owner edits it and its reports")
    return folder


async def report_for(context: RequestContext, report_id: str, *,
                     edit: bool) -> tuple[Report, ReportFolder]:
    require_reports(context, "use reports")
    report = await get_in_org(context.session, Report, context.org_id, report_id, "id",
                              "report")
    folder = await get_in_org(context.session, ReportFolder, context.org_id, report.folder_id)
    if not sees(context, folder):
        raise PermissionDenied("this report's folder is neither yours nor shared with you")
    if edit and not edits(context, folder):
        raise PermissionDenied("only the folder's owner edits it and its reports")
    return report, folder


async def visible_folders(context: RequestContext) -> list[ReportFolder]:
    require_reports(context, "use reports")
    rows = await context.session.scalars(
        select(ReportFolder).where(ReportFolder.organisation_id == context.org_id)
        .order_by(ReportFolder.created_ms, ReportFolder.id))
    return [folder for folder in rows if sees(context, folder)]


async def visible_reports(context: RequestContext) -> list[Report]:
    folders = {folder.id for folder in await visible_folders(context)}
    if not folders:
        return []
    rows = await context.session.scalars(
        select(Report).where(Report.organisation_id == context.org_id,
                             Report.folder_id.in_(folders))
        .order_by(Report.created_ms, Report.id))
    return list(rows)


def checked_filters(filters: Sequence[Mapping[str, Any] | None] | None,
                    argument: str = "filters") -> list[dict[str, Any]] | None:
    if filters is None:
        return None
    try:
        return [dict(item) for item in check_filters(filters)]
    except BadInput as error:
        raise BadInput(argument + error.argument.removeprefix("filters"),
                       error.problem) from None


def checked_period(context: RequestContext,
                   period: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if period is None:
        return None
    period_bounds(context, period)
    return {key: period.get(key) for key in ("target", "period", "start", "end")}


def checked_scope(scope: str | None) -> str | None:
    if scope is not None and scope not in RECORD_SCOPES:
        raise BadInput("recordScope", f"must be one of {', '.join(RECORD_SCOPES)}")
    return scope


async def run(context: RequestContext, report: Report, folder: ReportFolder,
              period: Mapping[str, Any] | None,
              filters: Sequence[Mapping[str, Any] | None] | None) -> dict[str, Any]:
    """Runs the report as the caller and keeps its rows; the SvcReportResult."""
    params = dict(report.params)
    params["period"] = (checked_period(context, period) or params.get("period")
                        or folder.period)
    scopes = [chain for chain in (folder.filters, checked_filters(filters)) if chain]
    start_ms, end_ms = period_bounds(context, params["period"])
    result = await run_inline_report(context, params, scopes, folder.record_scope)
    kept = ReportResult(
        id=new_id(), organisation_id=context.org_id, report_id=report.id,
        person_id=context.person.id, rows=[_stored(row) for row in result["rows"]],
        error=result["error"], start_ms=start_ms, end_ms=end_ms, created_ms=context.now_ms,
        expire_ms=context.now_ms + RESULT_TTL_MS)

    async def keep(session: AsyncSession) -> None:
        session.add(kept)

    context.query_writes.append(keep)
    return {"id": kept.id, "expire": kept.expire_ms, "pending": False,
            "link": (report.id, start_ms, end_ms), **result}


def _stored(row: Mapping[str, Any]) -> dict[str, Any]:
    entities = row["entities"]
    return {"person": entities["person"].id if entities["person"] else None,
            "projects": [project.id for project in entities["projects"]],
            "quantities": dict(row["quantities"])}


async def kept_result(context: RequestContext, result_id: str) -> dict[str, Any]:
    """A kept run, for the person who ran it (or a role managing reports) until it expires."""
    require_reports(context, "use reports")
    kept = await get_in_org(context.session, ReportResult, context.org_id, result_id, "id",
                            "report result")
    if kept.person_id != context.person.id and not manages_reports(context):
        raise PermissionDenied("a report result is only its runner's")
    if kept.expire_ms <= context.now_ms:
        raise BadInput("id", "this report result has expired: run the report again")
    return await rehydrated(context, kept)


async def rehydrated(context: RequestContext, kept: ReportResult) -> dict[str, Any]:
    person_ids = {row["person"] for row in kept.rows if row["person"]}
    project_ids = {p for row in kept.rows for p in row["projects"]}
    persons = await _by_id(context, Person, person_ids)
    projects = await _by_id(context, Project, project_ids)
    rows = [{"entities": {"person": persons.get(row["person"] or ""),
                          "projects": [projects[p] for p in row["projects"] if p in projects],
                          "tasks": [], "absenceType": None},
             "quantities": row["quantities"]} for row in kept.rows]
    link = (kept.report_id, kept.start_ms, kept.end_ms) if kept.report_id else None
    return {"id": kept.id, "rows": rows, "expire": kept.expire_ms, "pending": False,
            "error": kept.error, "link": link}


async def _by_id(context: RequestContext, model: Any, ids: set[str]) -> dict[str, Any]:
    """Those that still exist (a kept row may name a project deleted since)."""
    if not ids:
        return {}
    rows = await context.session.scalars(select(model).where(
        model.organisation_id == context.org_id, model.id.in_(sorted(ids))))
    return {row.id: row for row in rows}


def checked_name(name: str, argument: str = "name") -> str:
    if not name or not name.strip() or len(name.strip()) > 255:
        raise BadInput(argument, "must be a non-empty name of at most 255 characters")
    return name.strip()
