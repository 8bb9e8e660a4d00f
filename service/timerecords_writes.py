"""What every write of time records goes through, below the resolvers: the argument checks,
the projects named, building a new record, and the approval-workflow bridge
(service/rules/timesheet_edits.py) asked before a change and told after it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from sqlalchemy import Table, delete, insert
from sqlalchemy.orm import make_transient_to_detached

from plumbing.ids import new_id
from service.errors import BadInput
from service.graphql.context import RequestContext
from service.lookup import get_many_in_org
from service.models import AbsenceType, Person, Project, Task, TimeRecord
from service.models.records import time_record_projects
from service.rules.timesheet_edits import guard_time_record_change, record_time_record_change


def check_duration(duration: int, argument: str = "duration") -> None:
    if duration < 0:
        raise BadInput(argument, "must not be negative")


def check_period(start_ms: int, end_ms: int | None, argument: str) -> None:
    if end_ms is not None and end_ms < start_ms:
        raise BadInput(argument, "the endTime must not be before the startTime")


async def projects_by_ids(
    context: RequestContext, ids: Sequence[str | None] | None, argument: str
) -> list[Project]:
    if not ids:
        return []
    projects = await get_many_in_org(
        context.session, Project, context.org_id, ids, argument, "project"
    )
    unique = {project.id: project for project in projects}
    return sorted(unique.values(), key=lambda project: (project.name, project.id))


async def guard_edit(
    context: RequestContext, record: TimeRecord, *, new_start: int | None = None
) -> None:
    """Ask the approval workflow first: the old start, and the new start when it moves."""
    await guard_time_record_change(context, record.person_id, record.start_ms)
    if new_start is not None and new_start != record.start_ms:
        await guard_time_record_change(context, record.person_id, new_start)


async def mark_modified(
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


def new_record(
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


_RECORDS_TABLE = cast(Table, TimeRecord.__table__)
# Built once: Core INSERTs of the same rows the unit of work would write for a new record.
_INSERT_RECORD = insert(_RECORDS_TABLE)
_INSERT_PROJECT_LINK = insert(time_record_projects)


async def insert_records(context: RequestContext, records: Sequence[TimeRecord]) -> None:
    """Write new records (from `new_record`) with their project links, then put them in the
    session as if loaded. The unit of work's flush of a new record and its links costs
    several times more than the two statements it sends."""
    if not records:
        return
    session = context.session
    await session.execute(
        _INSERT_RECORD,
        [{column.key: getattr(record, column.key) for column in _RECORDS_TABLE.columns}
         for record in records],
    )
    links = [{"time_record_id": record.id, "project_id": project.id}
             for record in records for project in record.projects]
    if links:
        await session.execute(_INSERT_PROJECT_LINK, links)
    for record in records:
        # Its attributes, relationships included, become the loaded state: nothing is pending.
        make_transient_to_detached(record)
        session.add(record)


async def delete_records(context: RequestContext, records: Sequence[TimeRecord]) -> None:
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
