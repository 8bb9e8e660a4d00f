"""A person's planned days (extension fields `scheduledDays` / `expectedTime`). The time
settings that use work schedules are rows of `service/organisation/settings_registry.py`."""

from __future__ import annotations

from typing import Any

from ariadne import MutationType, ObjectType

from service.errors import PermissionDenied
from service.graphql.context import RequestContext
from service.models import Person
from service.plannings import schedule_rules as rules
from service.plannings.models import ScheduleType
from service.plannings.schedule_plan import plan_person

mutation = MutationType()
person_type = ObjectType("SvcPerson")
scheduled_day = ObjectType("SvcScheduledDay")


async def _planned(context: RequestContext, person: Person, start: int,
                   end: int) -> list[rules.PlannedDay]:
    if not await context.can_access_person_data(person.id):
        raise PermissionDenied("only the person, their managers and administrators see this")
    return await plan_person(context.session, context.organisation, person, start, end)


@person_type.field("scheduledDays")
async def resolve_scheduled_days(person: Person, info: Any, startTime: int,
                                 endTime: int) -> list[rules.PlannedDay]:
    return await _planned(info.context, person, startTime, endTime)


@person_type.field("expectedTime")
async def resolve_expected_time(person: Person, info: Any, startTime: int, endTime: int) -> int:
    return rules.expected_ms(await _planned(info.context, person, startTime, endTime))


@scheduled_day.field("date")
def resolve_date(day: rules.PlannedDay, _info: Any) -> int:
    return day.start_ms


@scheduled_day.field("scheduleType")
async def resolve_schedule_type(day: rules.PlannedDay, info: Any) -> ScheduleType | None:
    if day.schedule_id is None:
        return None
    context: RequestContext = info.context
    return await context.session.get(ScheduleType, day.schedule_id)


@scheduled_day.field("wfh")
def resolve_wfh(day: rules.PlannedDay, _info: Any) -> bool:
    return day.working and day.scheduled.wfh


@scheduled_day.field("workingDay")
def resolve_working(day: rules.PlannedDay, _info: Any) -> bool:
    return day.working


BINDABLES = [mutation, person_type, scheduled_day]
