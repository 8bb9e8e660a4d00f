"""Selecting time records: the arguments of getTimeRecords / countTimeRecords as SQL.

The period (`startTime`, `endTime`) is the half-open window [startTime, endTime) on a record's
start, so consecutive weeks never share a record. `time`, `absence` and `wfh` restrict only
when true. Filter fields on projects include their subprojects; filter fields on tags include
the tags below them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from sqlalchemy import (
    BigInteger,
    Select,
    String,
    and_,
    bindparam,
    func,
    not_,
    or_,
    select,
    union_all,
)
from sqlalchemy.orm import aliased, contains_eager, lazyload
from sqlalchemy.sql.elements import ColumnElement

from service.errors import BadInput
from service.graphql.context import RequestContext
from service.graphql.fastpath import is_plain
from service.graphql.filters import Condition, filter_clause
from service.graphql.lookahead import requested
from service.models import (
    PersonManager,
    PersonTag,
    Project,
    ProjectTag,
    Tag,
    Task,
    TimeRecord,
    time_record_projects,
)
from service.structure import subtree
from service.timesheets import record_status_condition

# When a record ends: its endTime, or its start plus its duration.
RECORD_END = func.coalesce(TimeRecord.end_ms, TimeRecord.start_ms + TimeRecord.duration_ms)


def _ids(values: Sequence[str | None] | None) -> list[str]:
    return [value for value in values or [] if value is not None]


def _on_projects(projects: Select[Any]) -> ColumnElement[bool]:
    """The record is logged against at least one of the projects selected. An IN over the
    link table (not a correlated EXISTS) lets the database start from the project's records."""
    return TimeRecord.id.in_(
        select(time_record_projects.c.time_record_id).where(
            time_record_projects.c.project_id.in_(projects)
        )
    )


def _task_in(condition: ColumnElement[bool]) -> ColumnElement[bool]:
    return TimeRecord.task_id.in_(select(Task.id).where(condition))


def _task_not_in(condition: ColumnElement[bool]) -> ColumnElement[bool]:
    return or_(TimeRecord.task_id.is_(None), not_(_task_in(condition)))


def filter_conditions(org_id: str) -> Mapping[str, Condition]:
    """SvcTimeRecordFilter field → SQL condition on TimeRecord."""

    def projects_in(ids: Sequence[str | None]) -> ColumnElement[bool]:
        return _on_projects(subtree(Project, org_id, ids))

    def project_tags(ids: Sequence[str | None]) -> ColumnElement[bool]:
        tagged = select(ProjectTag.project_id).where(
            ProjectTag.organisation_id == org_id,
            ProjectTag.tag_id.in_(subtree(Tag, org_id, ids)),
        )
        return _on_projects(tagged)

    def in_categories(ids: Sequence[str | None]) -> Select[Any]:
        return select(Project.id).where(
            Project.organisation_id == org_id, Project.category_id.in_(_ids(ids))
        )

    def person_tags(ids: Sequence[str | None]) -> ColumnElement[bool]:
        return TimeRecord.person_id.in_(
            select(PersonTag.person_id).where(
                PersonTag.organisation_id == org_id,
                PersonTag.tag_id.in_(subtree(Tag, org_id, ids)),
            )
        )

    return {
        "id": lambda value: TimeRecord.id == value,
        "notId": lambda value: TimeRecord.id != value,
        "personId": lambda value: TimeRecord.person_id == value,
        "notPersonId": lambda value: TimeRecord.person_id != value,
        "personIds": lambda value: TimeRecord.person_id.in_(_ids(value)),
        "startTime": lambda value: TimeRecord.start_ms >= value,
        "endTime": lambda value: RECORD_END <= value,
        "projectIds": projects_in,
        "notProjectIds": lambda value: not_(projects_in(value)),
        "taskIds": lambda value: TimeRecord.task_id.in_(_ids(value)),
        "notTaskIds": lambda value: or_(
            TimeRecord.task_id.is_(None), TimeRecord.task_id.not_in(_ids(value))
        ),
        "projectTagIds": project_tags,
        "projectNotTagIds": lambda value: not_(project_tags(value)),
        "personTagIds": person_tags,
        "personNotTagIds": lambda value: not_(person_tags(value)),
        "projectCategoryIds": lambda value: _on_projects(in_categories(value)),
        "notProjectCategoryIds": lambda value: not_(_on_projects(in_categories(value))),
        "taskCategoryIds": lambda value: _task_in(Task.category_id.in_(_ids(value))),
        "notTaskCategoryIds": lambda value: _task_not_in(Task.category_id.in_(_ids(value))),
        "isAbsence": lambda value: (
            TimeRecord.absence_id.is_not(None) if value else TimeRecord.absence_id.is_(None)
        ),
        "status": lambda value: record_status_condition(org_id, value),
    }


# The values of the conditions below, as parameters: a statement is made once per shape of
# the arguments (building one and its cache key costs more than running it) and run with them.
_ORG = bindparam("records_org", type_=String)
_ME = bindparam("records_person", type_=String)
_START = bindparam("records_start", type_=BigInteger)
_END = bindparam("records_end", type_=BigInteger)

# RequestContext.visible_person_ids for a caller who is no admin (themselves and the people
# they manage) as a subquery: no round trip of its own.
_VISIBLE = union_all(
    select(_ME),
    select(PersonManager.person_id).where(
        PersonManager.organisation_id == _ORG, PersonManager.manager_id == _ME
    ),
)


@dataclass(frozen=True)
class RecordQuery:
    """The records a caller asks for: WHERE conditions and the values of their parameters.
    `shape` names the conditions when they follow from the parameters alone (no `filter`)."""

    conditions: tuple[ColumnElement[bool], ...]
    params: dict[str, Any]
    shape: tuple[bool, ...] | None


@cache
def _shaped_conditions(
    everyone: bool, start: bool, end: bool, time_only: bool, absence_only: bool, wfh: bool
) -> tuple[ColumnElement[bool], ...]:
    conditions: list[ColumnElement[bool]] = [TimeRecord.organisation_id == _ORG]
    if not everyone:
        conditions.append(TimeRecord.person_id.in_(_VISIBLE))
    if start:
        conditions.append(TimeRecord.start_ms >= _START)
    if end:
        conditions.append(TimeRecord.start_ms < _END)
    if time_only:
        conditions.append(TimeRecord.absence_id.is_(None))
    if absence_only:
        conditions.append(TimeRecord.absence_id.is_not(None))
    if wfh:
        conditions.append(TimeRecord.wfh.is_(True))
    return tuple(conditions)


def record_query(
    context: RequestContext,
    startTime: int | None = None,
    endTime: int | None = None,
    time: bool | None = None,
    absence: bool | None = None,
    wfh: bool | None = None,
    filter: Sequence[Mapping[str, Any] | None] | None = None,
) -> RecordQuery:
    """The records the caller may see that match the arguments (use with `select_visible`,
    `count_visible`)."""
    if startTime is not None and endTime is not None and endTime < startTime:
        raise BadInput("endTime", "must not be before startTime")
    shape = (
        context.is_admin,
        startTime is not None,
        endTime is not None,
        bool(time and not absence),
        bool(absence and not time),
        bool(wfh),
    )
    params: dict[str, Any] = {
        "records_org": context.org_id,
        "records_person": context.person.id,
        "records_start": startTime,
        "records_end": endTime,
    }
    conditions = _shaped_conditions(*shape)
    if filter:
        clause = filter_clause(filter, filter_conditions(context.org_id))
        return RecordQuery((*conditions, clause), params, None)
    return RecordQuery(conditions, params, shape)


def select_visible(query: RecordQuery, loading: RecordLoading | None = None) -> Select[Any]:
    """The records of `query` (see `select_records`); run it with `query.params`."""
    if query.shape is None:
        return select_records(query.conditions, loading)
    return _select_shaped(query.shape, loading)


def count_visible(query: RecordQuery) -> Select[Any]:
    """How many records `query` has; run it with `query.params`."""
    if query.shape is None:
        return count_records(query.conditions)
    return _count_shaped(query.shape)


@dataclass(frozen=True)
class RecordLoading:
    """Which of the records' relationships `select_records` loads (see `record_loading`)."""

    person: bool = True
    task: bool = True
    absence: bool = True
    projects: bool = True


# SvcTimeRecord fields that are relationships of TimeRecord.
_RELATIONS: dict[str, Any] = {
    "person": TimeRecord.person,
    "task": TimeRecord.task,
    "absence": TimeRecord.absence,
    "projects": TimeRecord.projects,
}

# Projects come in the records' query through these aliases, so that the filters' subqueries
# on time_record_projects stay uncorrelated. Made once: an alias costs more than a query.
_LINKS = time_record_projects.alias("record_project_links")
_PROJECT = aliased(Project, name="record_projects")


def record_loading(info: Any) -> RecordLoading:
    """Load only the relationships the query asks for (`person`, `task`, `absence`,
    `projects` of SvcTimeRecord), each with what the model loads with it. When a field with a
    resolver of its own is asked for (it might read any relationship), all are loaded."""
    record_type = info.schema.type_map["SvcTimeRecord"]
    selection = requested(info)
    for name in selection:
        if name == "__typename" or name in _RELATIONS:
            continue
        field = record_type.fields.get(name)
        if field is None or not (field.resolve is None or is_plain(field.resolve)):
            return RecordLoading()
    return RecordLoading(**{name: name in selection for name in _RELATIONS})


@cache
def _loading_options(loading: RecordLoading) -> tuple[Any, ...]:
    options: list[Any] = []
    for name, attribute in _RELATIONS.items():
        if not getattr(loading, name):
            options.append(lazyload(attribute))
        elif name == "projects":
            options.append(contains_eager(attribute.of_type(_PROJECT)))
    return tuple(options)


def select_records(
    conditions: Sequence[ColumnElement[bool]], loading: RecordLoading | None = None
) -> Select[TimeRecord]:
    """The records matching `conditions` in their order (start, then id). Without `loading`
    every relationship loads as the model says; with it, only those it names, and projects
    come in the same query (an outer join: use `.unique()`) rather than in a second one."""
    statement = select(TimeRecord).where(and_(*conditions))
    if loading is None:
        return statement.order_by(TimeRecord.start_ms, TimeRecord.id)
    statement = statement.options(*_loading_options(loading))
    if not loading.projects:
        return statement.order_by(TimeRecord.start_ms, TimeRecord.id)
    return (
        statement.outerjoin(_LINKS, _LINKS.c.time_record_id == TimeRecord.id)
        .outerjoin(_PROJECT, _PROJECT.id == _LINKS.c.project_id)
        .order_by(TimeRecord.start_ms, TimeRecord.id, _PROJECT.name)
    )


def count_records(conditions: Sequence[ColumnElement[bool]]) -> Select[int]:
    return select(func.count()).select_from(TimeRecord).where(and_(*conditions))


@cache
def _select_shaped(shape: tuple[bool, ...], loading: RecordLoading | None) -> Select[Any]:
    return select_records(_shaped_conditions(*shape), loading)


@cache
def _count_shaped(shape: tuple[bool, ...]) -> Select[Any]:
    return count_records(_shaped_conditions(*shape))
