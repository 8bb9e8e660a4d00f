"""Time records: queries, the add/edit/delete/clone mutations, and the timesheet setting
"Record time on these plannings" (task categories) at organisation, tag and person level.

A record belongs to one person. An employee sees and edits their own records, a manager
also those of the people they manage, an admin all. List queries silently return only the
visible records; get/edit/delete of an invisible one is refused. Every write passes through
the approval-workflow bridge (service/rules/timesheet_edits.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ariadne import MutationType, ObjectType, QueryType
from sqlalchemy import delete

from plumbing.ids import new_id
from service.allowances import check_records_balance
from service.errors import BadInput, PermissionDenied
from service.graphql.context import RequestContext
from service.graphql.fastpath import plain
from service.item_access import check_owner_access
from service.lookup import get_in_org, get_many_in_org
from service.models import (
    AbsenceType,
    Organisation,
    Person,
    Project,
    Tag,
    Task,
    TaskCategory,
    TimeRecord,
)
from service.rules.timesheet_edits import (
    guard_time_record_change,
    may_edit_by_status,
    record_time_record_change,
)
from service.schedule_plan import check_in_schedule
from service.timerecords_query import (
    count_visible,
    record_loading,
    record_query,
    select_records,
    select_visible,
)
from service.timerecords_rules import SETTING, check_task_allowed

query = QueryType()
mutation = MutationType()
time_record_type = ObjectType("SvcTimeRecord")


# ---------------------------------------------------------------------------- fields


@time_record_type.field("startTime")
@plain
def resolve_start_time(record: TimeRecord, _info: Any) -> int:
    return record.start_ms


@time_record_type.field("endTime")
@plain
def resolve_end_time(record: TimeRecord, _info: Any) -> int | None:
    return record.end_ms


@time_record_type.field("duration")
@plain
def resolve_duration(record: TimeRecord, _info: Any) -> int:
    return record.duration_ms


@time_record_type.field("nonBillable")
@plain
def resolve_non_billable(record: TimeRecord, _info: Any) -> bool:
    return record.non_billable


# ---------------------------------------------------------------------------- helpers


def _require_admin(context: RequestContext) -> None:
    if not context.is_admin:
        raise PermissionDenied("only an administrator may do this")


async def _require_person_access(context: RequestContext, person_id: str) -> None:
    if not await context.can_access_person_data(person_id):
        raise PermissionDenied("you may not see or edit this person's time records")


async def _require_edit_access(context: RequestContext, person_id: str, start_ms: int) -> None:
    """Access by role (the owner, their managers, admins), or else by the status of the
    timesheet for that period: its current-stage approver, or the approver who rejected it
    (edit rights by status). The status rules themselves are checked by `_guard`."""
    if await context.can_access_person_data(person_id):
        return
    if not await may_edit_by_status(context, person_id, start_ms):
        raise PermissionDenied("you may not see or edit this person's time records")


async def _load_record(context: RequestContext, record_id: str) -> TimeRecord:
    record = await get_in_org(
        context.session, TimeRecord, context.org_id, record_id, "id", "time record"
    )
    await _require_person_access(context, record.person_id)
    return record


async def _load_record_to_edit(context: RequestContext, record_id: str) -> TimeRecord:
    record = await get_in_org(
        context.session, TimeRecord, context.org_id, record_id, "id", "time record"
    )
    await _require_edit_access(context, record.person_id, record.start_ms)
    return record


def _check_duration(duration: int, argument: str = "duration") -> None:
    if duration < 0:
        raise BadInput(argument, "must not be negative")


def _check_period(start_ms: int, end_ms: int | None, argument: str) -> None:
    if end_ms is not None and end_ms < start_ms:
        raise BadInput(argument, "the endTime must not be before the startTime")


async def _projects(
    context: RequestContext, ids: Sequence[str | None] | None, argument: str
) -> list[Project]:
    if not ids:
        return []
    projects = await get_many_in_org(
        context.session, Project, context.org_id, ids, argument, "project"
    )
    unique = {project.id: project for project in projects}
    return sorted(unique.values(), key=lambda project: (project.name, project.id))


async def _guard(
    context: RequestContext, record: TimeRecord, *, new_start: int | None = None
) -> None:
    """Ask the approval workflow first: the old start, and the new start when it moves."""
    await guard_time_record_change(context, record.person_id, record.start_ms)
    if new_start is not None and new_start != record.start_ms:
        await guard_time_record_change(context, record.person_id, new_start)


async def _modified(
    context: RequestContext, record: TimeRecord, *, moved_from: int | None = None
) -> TimeRecord:
    """Mark the record changed and tell the workflow (both periods when the record moved)."""
    record.modified_ms = context.now_ms
    record.modified_by_id = context.person.id
    record.revision = (record.revision or 0) + 1
    await context.session.flush()
    if moved_from is not None and moved_from != record.start_ms:
        await record_time_record_change(context, record.person_id, moved_from, record.id,
                                        "modified")
    await record_time_record_change(
        context, record.person_id, record.start_ms, record.id, "modified"
    )
    return record


def _new_record(
    context: RequestContext,
    person: Person,
    start_ms: int,
    end_ms: int | None,
    duration_ms: int,
    task: Task | None,
    absence: AbsenceType | None,
    projects: list[Project],
    comment: str = "",
    non_billable: bool = False,
    wfh: bool = False,
) -> TimeRecord:
    record = TimeRecord(
        id=new_id(),
        organisation_id=context.org_id,
        person_id=person.id,
        start_ms=start_ms,
        end_ms=end_ms,
        duration_ms=duration_ms,
        task_id=task.id if task is not None else None,
        absence_id=absence.id if absence is not None else None,
        comment=comment,
        non_billable=non_billable,
        wfh=wfh,
        created_ms=context.now_ms,
        modified_ms=context.now_ms,
        modified_by_id=context.person.id,
        revision=1,
    )
    record.person = person
    record.task = task
    record.absence = absence
    record.projects = list(projects)
    return record


# ---------------------------------------------------------------------------- queries


@query.field("getTimeRecord")
async def resolve_get_time_record(_root: Any, info: Any, id: str) -> TimeRecord:
    return await _load_record(info.context, id)


@query.field("getTimeRecords")
async def resolve_get_time_records(_root: Any, info: Any, **args: Any) -> list[TimeRecord]:
    context: RequestContext = info.context
    records = record_query(context, **args)
    statement = select_visible(records, record_loading(info))
    return list((await context.session.scalars(statement, records.params)).unique())


@query.field("countTimeRecords")
async def resolve_count_time_records(_root: Any, info: Any, **args: Any) -> int:
    context: RequestContext = info.context
    records = record_query(context, **args)
    return int((await context.session.scalar(count_visible(records), records.params)) or 0)


# ---------------------------------------------------------------------------- add


@mutation.field("addTimeRecord")
async def resolve_add_time_record(
    _root: Any,
    info: Any,
    startTime: int,
    duration: int,
    personId: str,
    endTime: int | None = None,
    taskId: str | None = None,
    absenceId: str | None = None,
    projectIds: Sequence[str | None] | None = None,
) -> TimeRecord:
    context: RequestContext = info.context
    person = await get_in_org(
        context.session, Person, context.org_id, personId, "personId", "person"
    )
    await _require_edit_access(context, person.id, startTime)
    _check_duration(duration)
    _check_period(startTime, endTime, "endTime")
    task = (
        await get_in_org(context.session, Task, context.org_id, taskId, "taskId", "task")
        if taskId is not None
        else None
    )
    absence = (
        await get_in_org(
            context.session, AbsenceType, context.org_id, absenceId, "absenceId", "absence type"
        )
        if absenceId is not None
        else None
    )
    projects = await _projects(context, projectIds, "projectIds")
    if task is not None:
        await check_task_allowed(context.session, context.organisation, person, [task])
    await check_owner_access(context.session, context.organisation, person, projects=projects,
                             absences=[absence])
    if absence is None:
        await check_in_schedule(context.session, context.organisation, person, startTime,
                                projects)
    await guard_time_record_change(context, person.id, startTime)
    record = _new_record(context, person, startTime, endTime, duration, task, absence, projects)
    context.session.add(record)
    await context.session.flush()
    await check_records_balance(context.session, context.organisation, context.now_ms, [record])
    await record_time_record_change(context, person.id, record.start_ms, record.id, "added")
    return record


# ---------------------------------------------------------------------------- edits


@mutation.field("editTimeRecordStartTime")
async def resolve_edit_start_time(
    _root: Any, info: Any, id: str, startTime: int | None = None
) -> TimeRecord:
    context: RequestContext = info.context
    record = await _load_record_to_edit(context, id)
    if startTime is None:
        raise BadInput("startTime", "is required")
    if record.end_ms is not None and record.end_ms < startTime:
        raise BadInput("startTime", "must not be after the record's endTime")
    await _guard(context, record, new_start=startTime)
    moved_from = record.start_ms
    previous = (record.absence_id, record.start_ms, record.duration_ms)
    record.start_ms = startTime
    await _modified(context, record, moved_from=moved_from)
    await check_records_balance(context.session, context.organisation, context.now_ms, [record],
                                previous)
    return record


@mutation.field("editTimeRecordEndTime")
async def resolve_edit_end_time(
    _root: Any, info: Any, id: str, endTime: int | None = None
) -> TimeRecord:
    context: RequestContext = info.context
    record = await _load_record_to_edit(context, id)
    _check_period(record.start_ms, endTime, "endTime")
    await _guard(context, record)
    record.end_ms = endTime
    return await _modified(context, record)


@mutation.field("editTimeRecordDuration")
async def resolve_edit_duration(
    _root: Any, info: Any, id: str, duration: int
) -> TimeRecord:
    context: RequestContext = info.context
    record = await _load_record_to_edit(context, id)
    _check_duration(duration)
    await _guard(context, record)
    previous = (record.absence_id, record.start_ms, record.duration_ms)
    record.duration_ms = duration
    await _modified(context, record)
    await check_records_balance(context.session, context.organisation, context.now_ms, [record],
                                previous)
    return record


@mutation.field("editTimeRecordProjects")
async def resolve_edit_projects(
    _root: Any, info: Any, id: str, projectIds: Sequence[str | None]
) -> TimeRecord:
    context: RequestContext = info.context
    record = await _load_record_to_edit(context, id)
    projects = await _projects(context, projectIds, "projectIds")
    kept = {project.id for project in record.projects}
    await check_owner_access(context.session, context.organisation, record.person,
                             projects=[p for p in projects if p.id not in kept])
    await _guard(context, record)
    record.projects = projects
    return await _modified(context, record)


@mutation.field("editTimeRecordTask")
async def resolve_edit_task(
    _root: Any, info: Any, id: str, taskId: str
) -> TimeRecord:
    context: RequestContext = info.context
    record = await _load_record_to_edit(context, id)
    task = await get_in_org(context.session, Task, context.org_id, taskId, "taskId", "task")
    if task.id != record.task_id:
        await check_task_allowed(context.session, context.organisation, record.person, [task])
    await _guard(context, record)
    record.task_id = task.id
    record.task = task
    return await _modified(context, record)


@mutation.field("editTimeRecordAbsence")
async def resolve_edit_absence(
    _root: Any, info: Any, id: str, absenceId: str
) -> TimeRecord:
    context: RequestContext = info.context
    record = await _load_record_to_edit(context, id)
    absence = await get_in_org(
        context.session, AbsenceType, context.org_id, absenceId, "absenceId", "absence type"
    )
    if absence.id != record.absence_id:
        await check_owner_access(context.session, context.organisation, record.person,
                                 absences=[absence])
    await _guard(context, record)
    previous = (record.absence_id, record.start_ms, record.duration_ms)
    record.absence_id = absence.id
    record.absence = absence
    await _modified(context, record)
    await check_records_balance(context.session, context.organisation, context.now_ms, [record],
                                previous)
    return record


@mutation.field("editTimeRecordComment")
async def resolve_edit_comment(
    _root: Any, info: Any, id: str, comment: str
) -> TimeRecord:
    context: RequestContext = info.context
    record = await _load_record_to_edit(context, id)
    await _guard(context, record)
    record.comment = comment
    return await _modified(context, record)


@mutation.field("editTimeRecordNonBillable")
async def resolve_edit_non_billable(
    _root: Any, info: Any, id: str, nonBillable: bool
) -> TimeRecord:
    context: RequestContext = info.context
    record = await _load_record_to_edit(context, id)
    await _guard(context, record)
    record.non_billable = nonBillable
    return await _modified(context, record)


@mutation.field("editTimeRecordWfh")
async def resolve_edit_wfh(
    _root: Any, info: Any, id: str, wfh: bool
) -> TimeRecord:
    context: RequestContext = info.context
    record = await _load_record_to_edit(context, id)
    await _guard(context, record)
    record.wfh = wfh
    return await _modified(context, record)


# ---------------------------------------------------------------------------- delete, clone


async def _delete_records(context: RequestContext, records: Sequence[TimeRecord]) -> None:
    """Guard every deletion first, then delete them all, then tell the workflow."""
    for record in records:
        await guard_time_record_change(context, record.person_id, record.start_ms)
    if records:
        await context.session.execute(
            delete(TimeRecord)
            .where(
                TimeRecord.organisation_id == context.org_id,
                TimeRecord.id.in_([record.id for record in records]),
            )
            .execution_options(synchronize_session=False)
        )
        for record in records:
            context.session.expunge(record)
    for record in records:
        await record_time_record_change(
            context, record.person_id, record.start_ms, record.id, "deleted"
        )


@mutation.field("deleteTimeRecords")
async def resolve_delete_time_records(
    _root: Any, info: Any, ids: Sequence[str]
) -> list[TimeRecord]:
    context: RequestContext = info.context
    found = await get_many_in_org(
        context.session, TimeRecord, context.org_id, ids, "ids", "time record"
    )
    records = list({record.id: record for record in found}.values())
    for record in records:
        await _require_edit_access(context, record.person_id, record.start_ms)
    await _delete_records(context, records)
    return records


@mutation.field("cloneTimeRecords")
async def resolve_clone_time_records(
    _root: Any,
    info: Any,
    personId: str,
    sourceStartTime: int,
    sourceEndTime: int,
    targetStartTime: int,
    targetEndTime: int,
    replaceExisting: bool | None = None,
) -> list[TimeRecord]:
    """Copy the person's records of [sourceStart, sourceEnd) into [targetStart, targetEnd),
    each shifted by targetStart - sourceStart; copies that would start outside the target
    period are left out. With replaceExisting the target period's records are deleted first."""
    context: RequestContext = info.context
    person = await get_in_org(
        context.session, Person, context.org_id, personId, "personId", "person"
    )
    await _require_person_access(context, person.id)
    if sourceEndTime <= sourceStartTime:
        raise BadInput("sourceEndTime", "must be after sourceStartTime")
    if targetEndTime <= targetStartTime:
        raise BadInput("targetEndTime", "must be after targetStartTime")
    if targetStartTime < sourceEndTime and sourceStartTime < targetEndTime:
        raise BadInput("targetStartTime", "the target period must not overlap the source period")

    def window(start: int, end: int) -> Any:
        return select_records(
            [
                TimeRecord.organisation_id == context.org_id,
                TimeRecord.person_id == person.id,
                TimeRecord.start_ms >= start,
                TimeRecord.start_ms < end,
            ]
        )

    shift = targetStartTime - sourceStartTime
    sources = [
        record
        for record in (await context.session.scalars(window(sourceStartTime, sourceEndTime)))
        .unique()
        .all()
        if record.start_ms + shift < targetEndTime
    ]
    tasks = [record.task for record in sources if record.task is not None]
    await check_task_allowed(context.session, context.organisation, person, tasks)
    await check_owner_access(context.session, context.organisation, person,
                             projects=[p for source in sources for p in source.projects],
                             absences=[source.absence for source in sources])
    if replaceExisting:
        existing = (await context.session.scalars(window(targetStartTime, targetEndTime))).unique()
        await _delete_records(context, list(existing))
    clones = [
        _new_record(
            context,
            person,
            source.start_ms + shift,
            source.end_ms + shift if source.end_ms is not None else None,
            source.duration_ms,
            source.task,
            source.absence,
            list(source.projects),
            comment=source.comment,
            non_billable=source.non_billable,
            wfh=source.wfh,
        )
        for source in sources
    ]
    for clone in clones:
        await guard_time_record_change(context, person.id, clone.start_ms)
    context.session.add_all(clones)
    await context.session.flush()
    await check_records_balance(context.session, context.organisation, context.now_ms, clones)
    for clone in clones:
        await record_time_record_change(context, person.id, clone.start_ms, clone.id, "added")
    return clones


# ---------------------------------------------------------------------------- plannings


async def _task_categories(
    context: RequestContext, ids: Sequence[str | None] | None
) -> list[str] | None:
    if ids is None:
        return None
    categories = await get_many_in_org(
        context.session, TaskCategory, context.org_id, ids, "taskCategories", "task category"
    )
    return list(dict.fromkeys(category.id for category in categories))


def _with_setting(settings: Mapping[str, Any] | None, value: list[str] | None) -> dict[str, Any]:
    updated = dict(settings or {})
    if value is None:
        updated.pop(SETTING, None)
    else:
        updated[SETTING] = value
    return updated


@mutation.field("editOrganisationTimeSettingsTaskCategories")
async def resolve_edit_organisation_task_categories(
    _root: Any, info: Any, taskCategories: Sequence[str | None] | None = None
) -> Organisation:
    context: RequestContext = info.context
    _require_admin(context)
    value = await _task_categories(context, taskCategories)
    context.organisation.settings = _with_setting(context.organisation.settings, value)
    return context.organisation


@mutation.field("editTagTimeSettingsTaskCategories")
async def resolve_edit_tag_task_categories(
    _root: Any,
    info: Any,
    id: str,
    taskCategories: Sequence[str | None] | None = None,
) -> Tag:
    context: RequestContext = info.context
    _require_admin(context)
    tag = await get_in_org(context.session, Tag, context.org_id, id, "id", "tag")
    value = await _task_categories(context, taskCategories)
    tag.settings = _with_setting(tag.settings, value)
    return tag


@mutation.field("editPersonTimeSettingsTaskCategories")
async def resolve_edit_person_task_categories(
    _root: Any,
    info: Any,
    id: str,
    taskCategories: Sequence[str | None] | None = None,
) -> Person:
    context: RequestContext = info.context
    _require_admin(context)
    person = await get_in_org(context.session, Person, context.org_id, id, "id", "person")
    value = await _task_categories(context, taskCategories)
    person.settings = _with_setting(person.settings, value)
    return person


BINDABLES = [query, mutation, time_record_type]
