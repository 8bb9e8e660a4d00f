"""Selecting time records: the arguments of getTimeRecords / countTimeRecords as SQL.

The period (`startTime`, `endTime`) is the half-open window [startTime, endTime) on a record's
start, so consecutive weeks never share a record. `time`, `absence` and `wfh` restrict only
when true. Filter fields on projects include their subprojects; filter fields on tags include
the tags below them.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Select, and_, func, not_, or_, select
from sqlalchemy.sql.elements import ColumnElement

from service.approvals.filters import record_status_condition
from service.errors import BadInput
from service.graphql.context import RequestContext
from service.graphql.filters import Condition, filter_clause
from service.models import (
    PersonTag,
    Project,
    ProjectTag,
    Tag,
    Task,
    TimeRecord,
    time_record_projects,
)

_cte_names = itertools.count()

# When a record ends: its endTime, or its start plus its duration.
RECORD_END = func.coalesce(TimeRecord.end_ms, TimeRecord.start_ms + TimeRecord.duration_ms)


def _ids(values: Sequence[str | None] | None) -> list[str]:
    return [value for value in values or [] if value is not None]


def project_subtree(org_id: str, ids: Sequence[str | None]) -> Select[Any]:
    """The projects named and every project below them."""
    name = f"project_tree_{next(_cte_names)}"
    base = (
        select(Project.id.label("id"))
        .where(Project.organisation_id == org_id, Project.id.in_(_ids(ids)))
        .cte(name, recursive=True)
    )
    child = select(Project.id).where(
        Project.organisation_id == org_id, Project.parent_id == base.c.id
    )
    tree = base.union(child)
    return select(tree.c.id)


def tag_subtree(org_id: str, ids: Sequence[str | None]) -> Select[Any]:
    """The tags named and every tag below them."""
    name = f"tag_tree_{next(_cte_names)}"
    base = (
        select(Tag.id.label("id"))
        .where(Tag.organisation_id == org_id, Tag.id.in_(_ids(ids)))
        .cte(name, recursive=True)
    )
    child = select(Tag.id).where(Tag.organisation_id == org_id, Tag.parent_id == base.c.id)
    tree = base.union(child)
    return select(tree.c.id)


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
        return _on_projects(project_subtree(org_id, ids))

    def project_tags(ids: Sequence[str | None]) -> ColumnElement[bool]:
        tagged = select(ProjectTag.project_id).where(
            ProjectTag.organisation_id == org_id,
            ProjectTag.tag_id.in_(tag_subtree(org_id, ids)),
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
                PersonTag.tag_id.in_(tag_subtree(org_id, ids)),
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


async def record_conditions(
    context: RequestContext,
    startTime: int | None = None,
    endTime: int | None = None,
    time: bool | None = None,
    absence: bool | None = None,
    wfh: bool | None = None,
    filter: Sequence[Mapping[str, Any] | None] | None = None,
) -> list[ColumnElement[bool]]:
    """WHERE conditions for the records the caller may see that match the arguments."""
    if startTime is not None and endTime is not None and endTime < startTime:
        raise BadInput("endTime", "must not be before startTime")
    conditions: list[ColumnElement[bool]] = [TimeRecord.organisation_id == context.org_id]
    visible = await context.visible_person_ids()
    if visible is not None:
        conditions.append(TimeRecord.person_id.in_(sorted(visible)))
    if startTime is not None:
        conditions.append(TimeRecord.start_ms >= startTime)
    if endTime is not None:
        conditions.append(TimeRecord.start_ms < endTime)
    if time and not absence:
        conditions.append(TimeRecord.absence_id.is_(None))
    if absence and not time:
        conditions.append(TimeRecord.absence_id.is_not(None))
    if wfh:
        conditions.append(TimeRecord.wfh.is_(True))
    if filter:
        conditions.append(filter_clause(filter, filter_conditions(context.org_id)))
    return conditions


def select_records(conditions: Sequence[ColumnElement[bool]]) -> Select[TimeRecord]:
    return (
        select(TimeRecord)
        .where(and_(*conditions))
        .order_by(TimeRecord.start_ms, TimeRecord.id)
    )


def count_records(conditions: Sequence[ColumnElement[bool]]) -> Select[int]:
    return select(func.count()).select_from(TimeRecord).where(and_(*conditions))

