"""Time records: reading them, adding one, deleting some, and cloning a period's records.

A record belongs to one person. An employee sees and edits their own records, a manager
also those of the people they manage, an admin all (service/time_records/access.py). List
queries silently return only the visible records; get/edit/delete of an invisible one is
refused. Every write passes through the approval-workflow bridge
(service/timesheets/timesheet_edits.py). Editing a record is in time_record_edits.py, the setting
"Record time on these plannings" in settings_registry.py (service/time_records/entry_settings.py
applies it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ariadne import MutationType, ObjectType, QueryType

from service.absences import check_records_balance
from service.access import check_owner_access
from service.errors import BadInput
from service.graphql.context import RequestContext
from service.graphql.fastpath import plain
from service.lookup import get_in_org, get_many_in_org
from service.models import AbsenceType, Person, Task, TimeRecord
from service.time_records.access import (
    load_owner,
    load_record,
    require_edit_access,
    require_person_access,
)
from service.time_records.entry_settings import (
    Entry,
    Write,
    check_records,
    checked,
    project_facts,
    record_entry,
)
from service.time_records.query import (
    count_visible,
    record_loading,
    record_query,
    select_records,
    select_visible,
)
from service.time_records.writes import (
    check_duration,
    check_period,
    delete_records,
    insert_records,
    new_record,
    projects_by_ids,
)
from service.timesheets import guard_time_record_change, record_time_record_change

query = QueryType()
mutation = MutationType()
time_record_type = ObjectType("SvcTimeRecord")


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


@query.field("getTimeRecord")
async def resolve_get_time_record(_root: Any, info: Any, id: str) -> TimeRecord:
    return await load_record(info.context, id)


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
    person = await load_owner(context, personId, "personId")
    await require_edit_access(context, person.id, startTime)
    check_duration(duration)
    check_period(startTime, endTime, "endTime")
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
    named = await projects_by_ids(context, projectIds, "projectIds")
    projects = named.projects
    await check_owner_access(context.session, context.organisation, person, projects=projects,
                             absences=[absence], loaded=named.parents,
                             members=named.members)
    entry = await checked(
        context.session, context.organisation, person, projects,
        Write("add", Entry(startTime, duration, endTime, absence is not None,
                           task_category=task.category_id if task is not None else None,
                           has_task=task is not None, projects=project_facts(projects))),
        now_ms=context.now_ms, admin=context.is_admin)
    await guard_time_record_change(context, person.id, startTime,
                                   absence.id if absence is not None else None)
    record = new_record(context, person, startTime, entry.end_ms, entry.duration_ms, task,
                        absence, projects)
    await insert_records(context, [record])
    await check_records_balance(context.session, context.organisation, context.now_ms, [record])
    await record_time_record_change(context, person.id, record.start_ms, record.id, "added",
                                    record.absence_id)
    return record


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
        await require_edit_access(context, record.person_id, record.start_ms)
        await check_records(context.session, context.organisation, record.person, [record],
                            kind="delete", now_ms=context.now_ms, admin=context.is_admin)
    await delete_records(context, records)
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
    await require_person_access(context, person.id)
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
    await check_owner_access(context.session, context.organisation, person,
                             projects=[p for source in sources for p in source.projects],
                             absences=[source.absence for source in sources])
    if replaceExisting:
        existing = list(
            (await context.session.scalars(window(targetStartTime, targetEndTime))).unique())
        await check_records(context.session, context.organisation, person, existing,
                            kind="delete", now_ms=context.now_ms, admin=context.is_admin)
        await delete_records(context, existing)
    clones = []
    for source in sources:
        copy = record_entry(source, task=source.task, start_ms=source.start_ms + shift,
                            end_ms=source.end_ms + shift if source.end_ms is not None else None)
        entry = await checked(context.session, context.organisation, person, source.projects,
                              Write("clone", copy), now_ms=context.now_ms,
                              admin=context.is_admin)
        await guard_time_record_change(context, person.id, entry.start_ms, source.absence_id)
        clones.append(new_record(
            context,
            person,
            entry.start_ms,
            entry.end_ms,
            entry.duration_ms,
            source.task,
            source.absence,
            list(source.projects),
            comment=source.comment,
            non_billable=source.non_billable,
            wfh=source.wfh,
        ))
    await insert_records(context, clones)
    await check_records_balance(context.session, context.organisation, context.now_ms, clones)
    for clone in clones:
        await record_time_record_change(context, person.id, clone.start_ms, clone.id, "added",
                                        clone.absence_id)
    return clones


BINDABLES = [query, mutation, time_record_type]
