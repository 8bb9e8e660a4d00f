"""getTimesheetScore(personId, periods): how the person's last complete periods (default 12,
at most 260; of their own periodicity, time zone and first day of the week; none before their
start date) were submitted: service/timesheets/score_rules.py. Whoever may see the person's
data reads it (themselves, their managers, administrators); others are refused."""

from __future__ import annotations

from typing import Any

from ariadne import QueryType
from sqlalchemy import select

from plumbing import periods as calendar
from service.errors import BadInput, PermissionDenied
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import Person
from service.timesheets.models import ApprovalEvent
from service.timesheets.period_rules import period_settings
from service.timesheets.score_rules import REJECT_KIND, SUBMIT_KINDS, Event, timesheet_score

DEFAULT_PERIODS = 12
MAX_PERIODS = 260

query = QueryType()


@query.field("getTimesheetScore")
async def resolve_timesheet_score(
    _root: Any, info: Any, personId: str, periods: int | None = None
) -> dict[str, int]:
    context: RequestContext = info.context
    wanted = DEFAULT_PERIODS if periods is None else periods
    if not 1 <= wanted <= MAX_PERIODS:
        raise BadInput("periods", f"must be a whole number from 1 to {MAX_PERIODS}")
    person = await get_in_org(context.session, Person, context.org_id, personId, "personId",
                              "person")
    if not await context.can_access_person_data(person.id):
        raise PermissionDenied("you may not see this person's timesheets")
    settings = await period_settings(context.session, context.organisation, person)
    found: list[tuple[int, int]] = []
    moment = context.now_ms
    for _ in range(wanted):
        start, end = calendar.previous_period(settings.kind, moment, settings.zone,
                                              settings.first_day)
        if end <= person.start_date_ms:
            break
        found.append((start, end))
        moment = start
    events: list[Event] = []
    if found:
        rows = await context.session.execute(
            select(ApprovalEvent.start_ms, ApprovalEvent.kind, ApprovalEvent.ts_ms).where(
                ApprovalEvent.organisation_id == context.org_id,
                ApprovalEvent.person_id == person.id,
                ApprovalEvent.kind.in_([*SUBMIT_KINDS, REJECT_KIND]),
                ApprovalEvent.start_ms >= found[-1][0],
                ApprovalEvent.start_ms < found[0][1],
            )
        )
        events = [Event(int(s), str(k), int(t)) for s, k, t in rows]
    score = timesheet_score(found, events)
    return {"score": score.score, "periods": score.periods, "onTime": score.on_time,
            "late": score.late, "notSubmitted": score.not_submitted,
            "rejections": score.rejections}


BINDABLES = [query]
