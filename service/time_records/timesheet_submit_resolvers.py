"""submitTimesheet: the period's time records as they stand pass the entry rules
(`check_submission`), then the approval workflow submits the timesheet (service/timesheets)."""

from __future__ import annotations

from typing import Any

from ariadne import MutationType

from service.errors import PermissionDenied
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import ApprovalEvent, Person
from service.time_records.entry_settings import check_submission
from service.timesheets import (
    caller_actor,
    check_scheduled_time,
    period_settings,
    period_to_submit,
    submit_timesheet,
)
from service.webhooks import KICK

mutation = MutationType()


@mutation.field("submitTimesheet")
async def resolve_submit(
    _root: Any, info: Any, personId: str, startTime: int, endTime: int
) -> ApprovalEvent:
    context: RequestContext = info.context
    owner = await get_in_org(context.session, Person, context.org_id, personId, "personId",
                             "person")
    if not await context.can_access_person_data(owner.id):
        raise PermissionDenied("you may submit only your own timesheet or your people's")
    endTime = period_to_submit(
        await period_settings(context.session, context.organisation, owner), startTime, endTime)
    records = await check_submission(context.session, context.organisation, owner, startTime,
                                     endTime, now_ms=context.now_ms, admin=context.is_admin)
    await check_scheduled_time(context.session, context.organisation, owner, startTime,
                               endTime)
    event = await submit_timesheet(caller_actor(context), owner, startTime, endTime,
                                   records=records)
    context.after_commit.append(KICK)
    return event


BINDABLES = [mutation]
