"""Editing a time record: its start and end, duration, projects, task, absence, comment,
billability and working from home. Each edit is refused without edit access to the record
(service/time_records/access.py) and passes through the approval-workflow bridge; a change of
start, duration or absence re-checks the absence allowances."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ariadne import MutationType

from service.absences import check_records_balance
from service.access import check_owner_access
from service.errors import BadInput
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import AbsenceType, Task, TimeRecord
from service.time_records.access import load_record_to_edit
from service.time_records.entry_rules import (
    ABSENCE,
    ANY,
    COMMENT,
    DURATION,
    END,
    PROJECTS,
    START,
    TASK,
)
from service.time_records.entry_settings import record_entry
from service.time_records.writes import (
    check_duration,
    check_period,
    guard_edit,
    mark_modified,
    projects_by_ids,
)

mutation = MutationType()


@mutation.field("editTimeRecordStartTime")
async def resolve_edit_start_time(
    _root: Any, info: Any, id: str, startTime: int | None = None
) -> TimeRecord:
    context: RequestContext = info.context
    record = await load_record_to_edit(context, id)
    if startTime is None:
        raise BadInput("startTime", "is required")
    if record.end_ms is not None and record.end_ms < startTime:
        raise BadInput("startTime", "must not be after the record's endTime")
    await guard_edit(context, record, START, record_entry(record, start_ms=startTime))
    moved_from = record.start_ms
    previous = (record.absence_id, record.start_ms, record.duration_ms)
    record.start_ms = startTime
    await mark_modified(context, record, moved_from=moved_from)
    await check_records_balance(context.session, context.organisation, context.now_ms, [record],
                                previous)
    return record


@mutation.field("editTimeRecordEndTime")
async def resolve_edit_end_time(
    _root: Any, info: Any, id: str, endTime: int | None = None
) -> TimeRecord:
    context: RequestContext = info.context
    record = await load_record_to_edit(context, id)
    check_period(record.start_ms, endTime, "endTime")
    after = record_entry(record, end_ms=endTime)
    stops = endTime is not None and record_entry(record).running
    if stops and endTime is not None:  # a running timer stops: its duration is the time since
        after = replace(after, duration_ms=endTime - record.start_ms)  # its start
    entry = await guard_edit(context, record, END, after)
    record.end_ms = endTime
    if stops:
        record.end_ms, record.duration_ms = entry.end_ms, entry.duration_ms
    return await mark_modified(context, record)


@mutation.field("editTimeRecordDuration")
async def resolve_edit_duration(
    _root: Any, info: Any, id: str, duration: int
) -> TimeRecord:
    context: RequestContext = info.context
    record = await load_record_to_edit(context, id)
    check_duration(duration)
    entry = await guard_edit(context, record, DURATION, record_entry(record, duration_ms=duration))
    previous = (record.absence_id, record.start_ms, record.duration_ms)
    record.duration_ms = entry.duration_ms
    await mark_modified(context, record)
    await check_records_balance(context.session, context.organisation, context.now_ms, [record],
                                previous)
    return record


@mutation.field("editTimeRecordProjects")
async def resolve_edit_projects(
    _root: Any, info: Any, id: str, projectIds: Sequence[str | None]
) -> TimeRecord:
    context: RequestContext = info.context
    record = await load_record_to_edit(context, id)
    named = await projects_by_ids(context, projectIds, "projectIds")
    projects = named.projects
    kept = {project.id for project in record.projects}
    await check_owner_access(context.session, context.organisation, record.person,
                             projects=[p for p in projects if p.id not in kept],
                             loaded=named.parents, members=named.members)
    await guard_edit(context, record, ANY)  # the lock of the record's present projects
    await guard_edit(context, record, PROJECTS, projects=projects)
    record.projects = projects
    return await mark_modified(context, record)


@mutation.field("editTimeRecordTask")
async def resolve_edit_task(
    _root: Any, info: Any, id: str, taskId: str
) -> TimeRecord:
    context: RequestContext = info.context
    record = await load_record_to_edit(context, id)
    task = await get_in_org(context.session, Task, context.org_id, taskId, "taskId", "task")
    await guard_edit(context, record, TASK if task.id != record.task_id else ANY, task=task)
    record.task_id = task.id
    record.task = task
    return await mark_modified(context, record)


@mutation.field("editTimeRecordAbsence")
async def resolve_edit_absence(
    _root: Any, info: Any, id: str, absenceId: str
) -> TimeRecord:
    context: RequestContext = info.context
    record = await load_record_to_edit(context, id)
    absence = await get_in_org(
        context.session, AbsenceType, context.org_id, absenceId, "absenceId", "absence type"
    )
    if absence.id != record.absence_id:
        await check_owner_access(context.session, context.organisation, record.person,
                                 absences=[absence])
    await guard_edit(context, record, ABSENCE, record_entry(record, absence=True))
    previous = (record.absence_id, record.start_ms, record.duration_ms)
    record.absence_id = absence.id
    record.absence = absence
    await mark_modified(context, record)
    await check_records_balance(context.session, context.organisation, context.now_ms, [record],
                                previous)
    return record


@mutation.field("editTimeRecordComment")
async def resolve_edit_comment(
    _root: Any, info: Any, id: str, comment: str
) -> TimeRecord:
    context: RequestContext = info.context
    record = await load_record_to_edit(context, id)
    await guard_edit(context, record, COMMENT, record_entry(record, comment=comment))
    record.comment = comment
    return await mark_modified(context, record)


@mutation.field("editTimeRecordNonBillable")
async def resolve_edit_non_billable(
    _root: Any, info: Any, id: str, nonBillable: bool
) -> TimeRecord:
    context: RequestContext = info.context
    record = await load_record_to_edit(context, id)
    await guard_edit(context, record, ANY)
    record.non_billable = nonBillable
    return await mark_modified(context, record)


@mutation.field("editTimeRecordWfh")
async def resolve_edit_wfh(
    _root: Any, info: Any, id: str, wfh: bool
) -> TimeRecord:
    context: RequestContext = info.context
    record = await load_record_to_edit(context, id)
    await guard_edit(context, record, ANY)
    record.wfh = wfh
    return await mark_modified(context, record)


BINDABLES = [mutation]
