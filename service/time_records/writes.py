"""What every write of time records goes through, below the resolvers: the argument checks,
the projects named, building a new record, and the approval-workflow bridge
(service/timesheets/timesheet_edits.py) asked before a change and told after it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Table, and_, bindparam, delete, insert, or_, select
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.orm.attributes import instance_dict, set_committed_value

from plumbing.ids import new_id
from service.as_loaded import Columns, attach_written
from service.budgets import check_budget_alerts
from service.errors import BadInput, NotFound
from service.graphql.context import RequestContext
from service.models import (
    AbsenceType,
    Person,
    Project,
    ProjectAccess,
    ProjectCategory,
    Task,
    TimeRecord,
    time_record_projects,
)
from service.time_records.entry_settings import Entry, Write, checked, record_entry
from service.timesheets import guard_time_record_change, record_time_record_change


def check_duration(duration: int, argument: str = "duration") -> None:
    if duration < 0:
        raise BadInput(argument, "must not be negative")


def check_period(start_ms: int, end_ms: int | None, argument: str) -> None:
    if end_ms is not None and end_ms < start_ms:
        raise BadInput(argument, "the endTime must not be before the startTime")


@dataclass(frozen=True)
class NamedProjects:
    """The projects a write names (each once, by name), and their parents and the "Who has
    access?" lists of both, read with them: what the access check needs
    (`check_owner_access(..., loaded=parents, members=members)`)."""

    projects: list[Project]
    parents: list[Project]
    members: dict[str, tuple[set[str], set[str]]]


_PROJECTS = cast(Table, Project.__table__)
_CATEGORIES = cast(Table, ProjectCategory.__table__)
_ACCESS = cast(Table, ProjectAccess.__table__)
_PARENTS = _PROJECTS.alias("parents")
_PROJECT = Columns(Project, prefix="p_", relations=("category",))
_CATEGORY = Columns(ProjectCategory, prefix="c_")
_AT_CATEGORY = 2 + _PROJECT.width
# The named projects and their parents, with their categories and each with its access list
# (a row per person or tag on it), in one statement of Core columns (as_loaded.py: the ORM's
# loading of the entities cost more than the statement).
_WITH_ACCESS_LISTS = (
    select(_ACCESS.c.person_id, _ACCESS.c.tag_id, *_PROJECT.labelled, *_CATEGORY.labelled)
    .select_from(_PROJECTS)
    .outerjoin(
        _ACCESS,
        and_(
            _ACCESS.c.organisation_id == bindparam("org_id"),
            _ACCESS.c.project_id == _PROJECTS.c.id,
        ),
    )
    .outerjoin(_CATEGORIES, _CATEGORIES.c.id == _PROJECTS.c.category_id)
)
# Built once; one for a single project (the usual write) without the expanding lists, whose
# rendering at each execution costs more than the query.
_NAMED_AND_PARENTS = _WITH_ACCESS_LISTS.where(
    _PROJECTS.c.organisation_id == bindparam("org_id"),
    or_(
        _PROJECTS.c.id.in_(bindparam("ids", expanding=True)),
        _PROJECTS.c.id.in_(
            select(_PARENTS.c.parent_id).where(
                _PARENTS.c.organisation_id == bindparam("org_id"),
                _PARENTS.c.id.in_(bindparam("child_ids", expanding=True)),
            )
        ),
    ),
)
_ONE_AND_PARENT = _WITH_ACCESS_LISTS.where(
    _PROJECTS.c.organisation_id == bindparam("org_id"),
    or_(
        _PROJECTS.c.id == bindparam("id"),
        _PROJECTS.c.id.in_(
            select(_PARENTS.c.parent_id).where(
                _PARENTS.c.organisation_id == bindparam("org_id"),
                _PARENTS.c.id == bindparam("id"),
            )
        ),
    ),
)


async def projects_by_ids(
    context: RequestContext, ids: Sequence[str | None] | None, argument: str
) -> NamedProjects:
    """The projects of `ids`, or NotFound naming `argument[i]` for the first missing."""
    named = list(ids or [])
    if not named:
        return NamedProjects([], [], {})
    for index, value in enumerate(named):
        if value is None:
            raise NotFound(f"{argument}[{index}]", value, "project")
    found: dict[str, Project] = {}
    members: dict[str, tuple[set[str], set[str]]] = {}
    session = context.session
    if len(named) == 1:
        rows = await session.execute(_ONE_AND_PARENT, {"org_id": context.org_id, "id": named[0]})
    else:
        rows = await session.execute(
            _NAMED_AND_PARENTS, {"org_id": context.org_id, "ids": named, "child_ids": named}
        )
    for row in rows:
        person_id, tag_id, project_id = row[0], row[1], _PROJECT.identity(row, 2)
        if project_id not in found:
            category = _CATEGORY.build(session, row, _AT_CATEGORY)
            project = _PROJECT.build(session, row, 2, {"category": category})
            assert project is not None
            found[project_id] = project
        people, tags = members.setdefault(project_id, (set(), set()))
        if person_id is not None:
            people.add(person_id)
        if tag_id is not None:
            tags.add(tag_id)
    for index, value in enumerate(named):
        if value not in found:
            raise NotFound(f"{argument}[{index}]", value, "project")
    unique = {value: found[value] for value in named if value is not None}
    parents = [project for key, project in found.items() if key not in unique]
    return NamedProjects(
        sorted(unique.values(), key=lambda project: (project.name, project.id)), parents, members
    )


async def guard_edit(
    context: RequestContext, record: TimeRecord, field: str, after: Entry | None = None, *,
    task: Task | None = None, projects: Sequence[Project] | None = None,
) -> Entry:
    """An edit of one `field` of the record (service/time_records/entry_rules.py names them),
    leaving it as
    `after`: the entry rules first (entry_settings.py), then the approval workflow (the old
    start, and the new start when it moves). Returns the record as it may be stored."""
    before = record_entry(record)
    if after is None:
        after = record_entry(record, task=task, projects=projects)
    entry = await checked(context.session, context.organisation, record.person,
                          record.projects if projects is None else projects,
                          Write("edit", after, frozenset({field}), before, record.id),
                          now_ms=context.now_ms, admin=context.is_admin)
    kept_absence = record.absence_id if field != "absence" else None
    await guard_time_record_change(context, record.person_id, record.start_ms, kept_absence)
    if entry.start_ms != record.start_ms:
        await guard_time_record_change(context, record.person_id, entry.start_ms, kept_absence)
    return entry


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
    await check_budget_alerts(context, [record])
    return record


_RECORDS_TABLE = cast(Table, TimeRecord.__table__)
_RECORD_CLASS = sa_inspect(TimeRecord).class_manager


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
    """A new record, not yet in the session: `insert_records` writes it. Its values are set
    as loaded ones (no change events: the constructor's attribute events and their history
    cost several times more, and `insert_records` makes them the loaded state anyway)."""
    record: TimeRecord = _RECORD_CLASS.new_instance()
    instance_dict(record).update(
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
        person=person,
        task=task,
        absence=absence,
    )
    set_committed_value(record, "projects", list(projects))
    return record


# Built once: Core INSERTs of the same rows the unit of work would write for a new record.
_INSERT_RECORD = insert(_RECORDS_TABLE)
_INSERT_PROJECT_LINK = insert(time_record_projects)
_RECORD_COLUMNS = tuple(column.key for column in _RECORDS_TABLE.columns)


def _row(values: dict[str, Any]) -> dict[str, Any]:
    return {key: values.get(key) for key in _RECORD_COLUMNS}


async def insert_records(context: RequestContext, records: Sequence[TimeRecord]) -> None:
    """Write new records (from `new_record`) with their project links, then put them in the
    session as if loaded. The unit of work's flush of a new record and its links costs
    several times more than the two statements it sends."""
    if not records:
        return
    session = context.session
    await session.execute(
        _INSERT_RECORD,
        [_row(instance_dict(record)) for record in records],
    )
    links = [{"time_record_id": record.id, "project_id": project.id}
             for record in records for project in record.projects]
    if links:
        await session.execute(_INSERT_PROJECT_LINK, links)
    for record in records:
        attach_written(session, record)
    await check_budget_alerts(context, records)


async def delete_records(context: RequestContext, records: Sequence[TimeRecord]) -> None:
    """Guard every deletion first, then delete them all, then tell the workflow."""
    for record in records:
        await guard_time_record_change(context, record.person_id, record.start_ms,
                                       record.absence_id)
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
            context, record.person_id, record.start_ms, record.id, "deleted", record.absence_id
        )
