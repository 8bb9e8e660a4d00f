"""The time settings that use work schedules (edited by admins, inherited person > tag >
organisation, stored like the other time settings) and a person's planned days
(extension fields `scheduledDays` / `expectedTime`)."""

from __future__ import annotations

from typing import Any

from ariadne import MutationType, ObjectType

from service import permissions
from service.approvals import settings as cfg
from service.errors import PermissionDenied
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import Person, Tag
from service.models.schedule import ScheduleType
from service.rules import schedules as rules
from service.schedule_plan import plan_person

require_permission = permissions.requirer(permissions.APPROVALS)

mutation = MutationType()
person_type = ObjectType("SvcPerson")
scheduled_day = ObjectType("SvcScheduledDay")


def _bind(name: str, target: str, key: str) -> None:
    async def resolver(_root: Any, info: Any, id: str | None = None, **kwargs: Any) -> Any:
        context: RequestContext = info.context
        require_permission(context, "change the timesheet settings")
        entity: Any = context.organisation
        if target == "Person":
            entity = await get_in_org(context.session, Person, context.org_id, id, "id",
                                      "person")
        elif target == "Tag":
            entity = await get_in_org(context.session, Tag, context.org_id, id, "id", "tag")
        cfg.set_value(entity, key, kwargs.get(key))
        return entity

    mutation.set_field(name, resolver)


for _target in ("Organisation", "Tag", "Person"):
    for _key in cfg.SCHEDULE_SETTINGS:
        _bind(f"edit{_target}TimeSettings{_key[0].upper()}{_key[1:]}", _target, _key)


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
