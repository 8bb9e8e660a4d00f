"""The automatic timesheet's suggested entries (extension field
`SvcPerson.suggestedTimeRecords`); the settings themselves are rows of
service/organisation/settings_registry.py."""

from __future__ import annotations

from typing import Any

from ariadne import ObjectType

from service.errors import BadInput, PermissionDenied
from service.graphql.context import RequestContext
from service.models import Person, Task
from service.timesheets.auto_timesheet import suggested_entries
from service.timesheets.auto_timesheet_rules import Suggestion

person_type = ObjectType("SvcPerson")
suggestion_type = ObjectType("SvcSuggestedTimeRecord")


@person_type.field("suggestedTimeRecords")
async def resolve_suggested(person: Person, info: Any, startTime: int,
                            endTime: int) -> list[Suggestion]:
    context: RequestContext = info.context
    if not await context.can_access_person_data(person.id):
        raise PermissionDenied("only the person, their managers and administrators see this")
    if endTime <= startTime:
        raise BadInput("endTime", "must be after startTime")
    return await suggested_entries(context.session, context.organisation, person,
                                   startTime, endTime, context.now_ms)


@suggestion_type.field("taskId")
def resolve_task_id(item: Suggestion, _info: Any) -> str:
    return item.task_id


@suggestion_type.field("task")
async def resolve_task(item: Suggestion, info: Any) -> Task | None:
    context: RequestContext = info.context
    return await context.session.get(Task, item.task_id)


@suggestion_type.field("day")
def resolve_day(item: Suggestion, _info: Any) -> str:
    return item.day.isoformat()


@suggestion_type.field("startTime")
def resolve_start(item: Suggestion, _info: Any) -> int:
    return item.start_ms


@suggestion_type.field("duration")
def resolve_duration(item: Suggestion, _info: Any) -> int:
    return item.duration_ms


BINDABLES = [person_type, suggestion_type]
