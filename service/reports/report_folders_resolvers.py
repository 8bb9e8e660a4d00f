"""Report folders: create, rename, their filters / period / record scope, sharing, delete
(the rules are service/reports/saved.py's)."""

from __future__ import annotations

from typing import Any

from ariadne import MutationType, ObjectType, QueryType
from sqlalchemy import delete, select

from service.errors import BadInput
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import Person
from service.reports import saved as store
from service.reports.models import Report, ReportFolder, ReportResult

query = QueryType()
mutation = MutationType()
folder_type = ObjectType("SvcReportFolder")


@query.field("getReportFolders")
async def resolve_get_report_folders(_root: Any, info: Any) -> list[ReportFolder]:
    return await store.visible_folders(info.context)


@mutation.field("createReportFolder")
async def resolve_create_report_folder(_root: Any, info: Any, name: str) -> ReportFolder:
    context: RequestContext = info.context
    store.require_reports(context, "create report folders")
    folder = ReportFolder(organisation_id=context.org_id, name=store.checked_name(name),
                          owner_id=context.person.id, shared_with=[],
                          created_ms=context.now_ms)
    context.session.add(folder)
    await context.session.flush()
    return folder


@mutation.field("editReportFolderName")
async def resolve_edit_name(_root: Any, info: Any, id: str, name: str) -> ReportFolder:
    folder = await store.folder_for(info.context, id, edit=True)
    folder.name = store.checked_name(name)
    return folder


@mutation.field("editReportFolderFilters")
async def resolve_edit_filters(_root: Any, info: Any, id: str,
                               filters: list[Any] | None = None) -> ReportFolder:
    folder = await store.folder_for(info.context, id, edit=True)
    folder.filters = store.checked_filters(filters) or None
    return folder


@mutation.field("editReportFolderPeriod")
async def resolve_edit_period(_root: Any, info: Any, id: str,
                              period: dict[str, Any] | None = None) -> ReportFolder:
    folder = await store.folder_for(info.context, id, edit=True)
    folder.period = store.checked_period(info.context, period)
    return folder


@mutation.field("editReportFolderRecordScope")
async def resolve_edit_scope(_root: Any, info: Any, id: str,
                             recordScope: str | None = None) -> ReportFolder:
    folder = await store.folder_for(info.context, id, edit=True)
    folder.record_scope = store.checked_scope(recordScope)
    return folder


@mutation.field("shareReportFolderWith")
async def resolve_share(_root: Any, info: Any, reportFolderId: str,
                        personId: str) -> ReportFolder:
    context: RequestContext = info.context
    folder = await store.folder_for(context, reportFolderId, "reportFolderId", edit=True)
    person = await get_in_org(context.session, Person, context.org_id, personId, "personId",
                              "person")
    if person.id == folder.owner_id:
        raise BadInput("personId", "the folder's owner sees it already")
    if person.id in folder.shared_with:
        context.skip_audit = True
    else:
        folder.shared_with = [*folder.shared_with, person.id]
    return folder


@mutation.field("unshareReportFolderWith")
async def resolve_unshare(_root: Any, info: Any, reportFolderId: str,
                          personId: str) -> ReportFolder:
    folder = await store.folder_for(info.context, reportFolderId, "reportFolderId", edit=True)
    if personId not in folder.shared_with:
        raise BadInput("personId", "the folder is not shared with this person")
    folder.shared_with = [p for p in folder.shared_with if p != personId]
    return folder


@mutation.field("deleteReportFolder")
async def resolve_delete(_root: Any, info: Any, id: str) -> ReportFolder:
    context: RequestContext = info.context
    folder = await store.folder_for(context, id, edit=True)
    reports = select(Report.id).where(Report.folder_id == folder.id,
                                      Report.organisation_id == context.org_id)
    await context.session.execute(delete(ReportResult).where(
        ReportResult.report_id.in_(reports)))
    await context.session.execute(delete(Report).where(
        Report.folder_id == folder.id, Report.organisation_id == context.org_id))
    await context.session.delete(folder)
    await context.session.flush()
    return folder


@folder_type.field("recordScope")
def resolve_record_scope(folder: ReportFolder, _info: Any) -> str | None:
    return folder.record_scope


@folder_type.field("owner")
async def resolve_owner(folder: ReportFolder, info: Any) -> Person:
    context: RequestContext = info.context
    return await get_in_org(context.session, Person, context.org_id, folder.owner_id)


@folder_type.field("sharedWith")
async def resolve_shared_with(folder: ReportFolder, info: Any) -> list[Person]:
    context: RequestContext = info.context
    if not folder.shared_with:
        return []
    rows = {p.id: p for p in await context.session.scalars(select(Person).where(
        Person.organisation_id == context.org_id, Person.id.in_(folder.shared_with)))}
    return [rows[p] for p in folder.shared_with if p in rows]


BINDABLES = [query, mutation, folder_type]
