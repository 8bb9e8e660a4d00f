"""Saved reports: create, edit (name, parameters, chart, recurrence, e-mails to notify),
delete, list, run and read a kept result. The recurrence mutations are rows of one table
(`RECURRENCE`); the rules of access are service/reports/saved.py's."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ariadne import MutationType, ObjectType, QueryType
from sqlalchemy import delete

from service.errors import BadInput
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.reports import saved as store
from service.reports.inline_report import check_params
from service.reports.models import Report, ReportFolder, ReportResult

query = QueryType()
mutation = MutationType()
report_type = ObjectType("SvcReport")

PARAMS = ("records", "period", "filters", "attributes", "groupBy", "options", "columnOrder",
          "subtotalColumns", "hideEmptyColumns")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def _one_of(*allowed: str) -> Callable[[str, Any], Any]:
    def check(argument: str, value: Any) -> Any:
        if value not in allowed:
            raise BadInput(argument, f"must be one of {', '.join(allowed)}")
        return value
    return check


def _between(low: int, high: int, default: int | None = None) -> Callable[[str, Any], Any]:
    def check(argument: str, value: Any) -> Any:
        if value is None and default is not None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise BadInput(argument, f"must be a whole number from {low} to {high}")
        return value
    return check


def _boolean(argument: str, value: Any) -> Any:
    if not isinstance(value, bool):
        raise BadInput(argument, "must be true or false")
    return value


# editReportReccurence<Suffix>(id, <argument>): the column it sets and its pure check
RECURRENCE: tuple[tuple[str, str, str, Callable[[str, Any], Any]], ...] = (
    ("Enabled", "enabled", "recurrence_enabled", _boolean),
    ("Period", "period", "recurrence_period",
     _one_of("day", "week", "biWeekly", "semiMonth", "month", "quarter")),
    ("Target", "target", "recurrence_target",
     _one_of("current", "previous", "yearToDay", "last12Months")),
    ("SendMode", "sendMode", "send_mode", _one_of("beforeEnd", "afterEnd", "dayOfMonth")),
    ("SendOffset", "sendOffset", "send_offset", _between(0, 31)),
    ("HourOfDay", "hourOfDay", "hour_of_day", _between(0, 23, default=8)),
)


def _bind_recurrence(suffix: str, argument: str, column: str,
                     check: Callable[[str, Any], Any]) -> None:
    async def resolve(_root: Any, info: Any, id: str, **args: Any) -> Report:
        context: RequestContext = info.context
        report, _ = await store.report_for(context, id, edit=True)
        value = check(argument, args.get(argument))
        if column == "send_offset" and report.send_mode == "dayOfMonth" and value == 0:
            raise BadInput(argument, "a day of the month is from 1 to 31")
        setattr(report, column, value)
        report.edited_ms = context.now_ms
        return report
    mutation.set_field(f"editReportReccurence{suffix}", resolve)


for _row in RECURRENCE:
    _bind_recurrence(*_row)


def _checked_params(context: RequestContext, given: dict[str, Any],
                    base: dict[str, Any]) -> dict[str, Any]:
    params = dict(base)
    for key in PARAMS:
        if key in given:
            params[key] = given[key]
    if params.get("records") is None:
        raise BadInput("records", "name at least one record type (time, absence)")
    check_params(context, params)
    params["filters"] = store.checked_filters(params.get("filters"))
    params["period"] = store.checked_period(context, params.get("period"))
    for key in ("columnOrder", "subtotalColumns", "hideEmptyColumns"):
        if params.get(key) is not None and any(v is None for v in params[key]):
            raise BadInput(key, "must list names, not null")
    return {key: value for key, value in params.items() if value is not None}


@mutation.field("createReport")
async def resolve_create_report(_root: Any, info: Any, name: str, folderId: str,
                                **args: Any) -> Report:
    context: RequestContext = info.context
    folder = await store.folder_for(context, folderId, "folderId", edit=True)
    report = Report(organisation_id=context.org_id, folder_id=folder.id,
                    name=store.checked_name(name), params=_checked_params(context, args, {}),
                    notify_emails=[], recurrence_enabled=False, recurrence_period="week",
                    recurrence_target="previous", send_mode="afterEnd", send_offset=0,
                    hour_of_day=8, last_run_ms=context.now_ms, created_ms=context.now_ms,
                    edited_ms=context.now_ms)
    context.session.add(report)
    await context.session.flush()
    return report


@mutation.field("editReportName")
async def resolve_edit_name(_root: Any, info: Any, id: str, name: str) -> Report:
    report, _ = await store.report_for(info.context, id, edit=True)
    report.name = store.checked_name(name)
    report.edited_ms = info.context.now_ms
    return report


@mutation.field("editReportParams")
async def resolve_edit_params(_root: Any, info: Any, id: str, **args: Any) -> Report:
    report, _ = await store.report_for(info.context, id, edit=True)
    report.params = _checked_params(info.context, args, report.params)
    report.edited_ms = info.context.now_ms
    return report


@mutation.field("editReportChart")
async def resolve_edit_chart(_root: Any, info: Any, id: str,
                             chart: dict[str, Any] | None = None) -> Report:
    report, _ = await store.report_for(info.context, id, edit=True)
    if chart is not None and (chart.get("chartHeight") or 0) < 0:
        raise BadInput("chart.chartHeight", "must not be negative")
    report.chart = dict(chart) if chart is not None else None
    report.edited_ms = info.context.now_ms
    return report


@mutation.field("addReportEmailToNotify")
async def resolve_add_email(_root: Any, info: Any, id: str, email: str) -> Report:
    report, _ = await store.report_for(info.context, id, edit=True)
    email = email.strip().lower()
    if not _EMAIL.match(email) or len(email) > 254:
        raise BadInput("email", f"{email!r} is not an e-mail address")
    if email in report.notify_emails:
        info.context.skip_audit = True
    else:
        report.notify_emails = [*report.notify_emails, email]
    return report


@mutation.field("removeReportEmailToNotify")
async def resolve_remove_email(_root: Any, info: Any, id: str, email: str) -> Report:
    report, _ = await store.report_for(info.context, id, edit=True)
    email = email.strip().lower()
    if email not in report.notify_emails:
        raise BadInput("email", "this address is not notified of the report")
    report.notify_emails = [e for e in report.notify_emails if e != email]
    return report


@mutation.field("deleteReport")
async def resolve_delete_report(_root: Any, info: Any, id: str) -> Report:
    context: RequestContext = info.context
    report, _ = await store.report_for(context, id, edit=True)
    await context.session.execute(delete(ReportResult).where(
        ReportResult.report_id == report.id, ReportResult.organisation_id == context.org_id))
    await context.session.delete(report)
    await context.session.flush()
    return report


@query.field("getReports")
async def resolve_get_reports(_root: Any, info: Any) -> list[Report]:
    return await store.visible_reports(info.context)


@query.field("runReport")
async def resolve_run_report(_root: Any, info: Any, id: str, period: Any = None,
                             filters: Any = None) -> dict[str, Any]:
    context: RequestContext = info.context
    report, folder = await store.report_for(context, id, edit=False)
    return await store.run(context, report, folder, period, filters)


@query.field("getReportResult")
async def resolve_get_report_result(_root: Any, info: Any, id: str) -> dict[str, Any]:
    return await store.kept_result(info.context, id)


@report_type.field("folder")
async def resolve_folder(report: Report, info: Any) -> ReportFolder:
    context: RequestContext = info.context
    return await get_in_org(context.session, ReportFolder, context.org_id, report.folder_id)


@report_type.field("params")
def resolve_params(report: Report, _info: Any) -> dict[str, Any]:
    return {"records": [], **report.params}


@report_type.field("reccurenceEnabled")
def resolve_enabled(report: Report, _info: Any) -> bool:
    return report.recurrence_enabled


@report_type.field("reccurence")
def resolve_recurrence(report: Report, _info: Any) -> dict[str, Any]:
    return {"period": report.recurrence_period, "target": report.recurrence_target,
            "sendMode": report.send_mode, "sendOffset": report.send_offset,
            "hourOfDay": report.hour_of_day, "lastRun": report.last_run_ms}


@report_type.field("notifyByEmail")
def resolve_notify(report: Report, _info: Any) -> list[str]:
    return list(report.notify_emails)


BINDABLES = [query, mutation, report_type]
