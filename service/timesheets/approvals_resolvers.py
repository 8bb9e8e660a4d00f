"""Timesheet approval states and transitions: what waits for whom (a person's period, the
caller's pending approvals, a team's states), and approve / reject / remind (submitting is
service/time_records/timesheet_submit_resolvers.py: it checks the records first). The
rules live in service/timesheets; this module reads arguments, checks who may ask, and shapes
results."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ariadne import MutationType, QueryType

from plumbing.ids import new_id
from plumbing.waiting import taking_turns
from service.errors import BadInput, NotFound, PermissionDenied
from service.graphql.context import RequestContext
from service.lookup import get_many_in_org
from service.models import Person
from service.timesheets import journal
from service.timesheets import overview as ov
from service.timesheets import stages as st
from service.timesheets.access import caller_actor, can_view_timesheet, person_summary
from service.timesheets.actor import period_label
from service.timesheets.decide import approve, reject
from service.timesheets.locks import Submission, lock_submission
from service.timesheets.models import (
    STATUS_APPROVED,
    STATUS_DRAFT,
    STATUS_SUBMITTED,
    ApprovalEvent,
    Timesheet,
)
from service.timesheets.pending import waiting_for
from service.timesheets.rows import EventRow
from service.timesheets.state import (
    PeriodState,
    approvals_detail,
    current_pending,
    people,
    period_state,
)
from service.webhooks import EVENT_TIMESHEET_REMINDER, KICK, enqueue_many

query = QueryType()
mutation = MutationType()

SUBMIT_KINDS = ("submit", "auto_submit")

# --- states --------------------------------------------------------------------------------


async def state_of(
    context: RequestContext, timesheet: Timesheet | None, read: PeriodState | None = None
) -> dict[str, Any]:
    """SvcApprovalState fields of a timesheet (None: a draft never submitted). `read`: the
    timesheet's approvals and submitter as `period_state` read them along with it."""
    if timesheet is None or timesheet.status == STATUS_DRAFT:
        return {"status": STATUS_DRAFT, "currentStage": None, "currentStageType": None,
                "pendingApprovers": [], "submitId": None, "by": None, "stageDetails": []}
    session = context.session
    if read is not None and read.timesheet is timesheet:
        detail, by_id = read.detail, read.submitted_by
    else:
        detail = await approvals_detail(session, timesheet)
        submit_event = await session.get(ApprovalEvent, timesheet.submit_id)
        by_id = submit_event.by_id if submit_event is not None else None
    approvals = {stage: {a for a, _ts in given} for stage, given in detail.items()}
    pending = current_pending(timesheet, approvals)
    wanted = [a for s in timesheet.stages for a in s.get("approvers") or []]
    found = await people(session, context.org_id, [*wanted, *([by_id] if by_id else [])])
    # Held for the request: the next state asked in it (aliases) finds them in the session.
    context.loaded_ahead.extend(found.values())
    details = []
    for index, stage in enumerate(timesheet.stages):
        given = approvals.get(index, set())
        waiting = (
            st.pending_approvers(stage, given)
            if timesheet.status == STATUS_SUBMITTED and index >= timesheet.stage
            and not stage.get("skipped")
            else []
        )
        details.append({
            "stage": index,
            "type": stage["type"],
            "skipped": bool(stage.get("skipped")),
            "approvedBy": [{"person": person_summary(found.get(a)), "ts": float(ts)}
                           for a, ts in detail.get(index, [])],
            "pending": [person_summary(found[p]) for p in waiting if p in found],
        })
    current = timesheet.stage if timesheet.status == STATUS_SUBMITTED else None
    return {
        "status": timesheet.status,
        "currentStage": current,
        "currentStageType": timesheet.stages[current]["type"] if current is not None
        and current < len(timesheet.stages) else None,
        "pendingApprovers": [person_summary(found[p]) for p in pending if p in found],
        "submitId": timesheet.submit_id,
        "by": person_summary(found.get(by_id)) if by_id else None,
        "stageDetails": details,
    }


def _check_period(start: int, end: int) -> None:
    if end <= start:
        raise BadInput("endTime", "must be after startTime")


@query.field("getApprovalState")
async def resolve_approval_state(
    _root: Any, info: Any, personId: str, startTime: int, endTime: int
) -> dict[str, Any]:
    context: RequestContext = info.context
    _check_period(startTime, endTime)
    read = await period_state(context.session, context.org_id, personId, startTime, endTime)
    if read is None:
        raise NotFound("personId", personId, "person")
    timesheet = read.timesheet
    allowed = await context.can_access_person_data(personId) or (
        timesheet is not None and await can_view_timesheet(context, timesheet)
    )
    if not allowed:
        raise PermissionDenied("you may not see this person's timesheets")
    return await state_of(context, timesheet, read)


async def _listed(
    context: RequestContext, timesheets: Sequence[Timesheet], states: dict[str, PeriodState]
) -> list[dict[str, Any]]:
    """SvcApprovalState of each timesheet with its owner, period and total: the persons named
    and the totals read once for all of them."""
    found = await people(context.session, context.org_id, ov.named_in(timesheets, states))
    # Held for the request: `state_of` then finds every person in the session.
    context.loaded_ahead.extend(found.values())
    totals = await ov.totals_of_timesheets(context.session, context.org_id, timesheets)
    result = []
    async for timesheet in taking_turns(timesheets):
        state = await state_of(context, timesheet, states[timesheet.id])
        result.append({
            **state,
            "person": person_summary(found.get(timesheet.person_id)),
            "startTime": timesheet.start_ms,
            "endTime": timesheet.end_ms,
            "totalDuration": float(totals.get(timesheet.id, 0)),
        })
    return result


@query.field("getPendingApprovals")
async def resolve_pending(_root: Any, info: Any, showAll: bool | None = None
                          ) -> list[dict[str, Any]]:
    """What waits for the caller (one indexed read: approvals/pending.py); with showAll, also
    every submitted timesheet of the organisation the caller may see."""
    context: RequestContext = info.context
    if not showAll:
        mine = await waiting_for(context.session, context.org_id, context.person.id)
        return await _listed(context, mine, await ov.period_states(context.session, mine))
    # A page at a time, its objects let go of before the next (the session's identity map
    # holds them weakly): the answer of an organisation of 10,000 is built holding one page's
    # timesheets and people, not everyone's (the process's resident memory keeps its peak).
    listed: list[dict[str, Any]] = []
    held = len(context.loaded_ahead)
    async for submitted in ov.submitted_pages(context.session, context.org_id):
        states = await ov.period_states(context.session, submitted)
        chosen = [
            timesheet async for timesheet in taking_turns(submitted)
            if context.person.id in current_pending(timesheet, ov.given(states[timesheet.id]))
            or await can_view_timesheet(context, timesheet)
        ]
        listed += await _listed(context, chosen, states)
        del context.loaded_ahead[held:]  # the page's people
        del submitted, states, chosen  # not held while the next page is read
    return listed


@query.field("getTeamApprovalStates")
async def resolve_team_states(
    _root: Any, info: Any, personIds: Sequence[str], startTime: int, endTime: int
) -> list[dict[str, Any]]:
    context: RequestContext = info.context
    _check_period(startTime, endTime)
    session = context.session
    persons = await get_many_in_org(session, Person, context.org_id, personIds,
                                    "personIds", "person")
    sheets = await ov.timesheets_for_period(session, context.org_id, [p.id for p in persons],
                                            startTime, endTime)
    visible = []
    for person in persons:
        timesheet = sheets.get(person.id)
        if await context.can_access_person_data(person.id) or (
            timesheet is not None and await can_view_timesheet(context, timesheet)
        ):
            visible.append(person)
    shown = [sheets[p.id] for p in visible if p.id in sheets]
    states = await ov.period_states(session, shown)
    found = await people(session, context.org_id, ov.named_in(shown, states))
    context.loaded_ahead.extend(found.values())
    contents = await ov.content_by_person(session, context.org_id, [p.id for p in visible],
                                          startTime, endTime)
    result = []
    async for person in taking_turns(visible):
        timesheet = sheets.get(person.id)
        state = await state_of(context, timesheet,
                               states[timesheet.id] if timesheet is not None else None)
        total = contents.get(person.id, (0, 0))[1]
        result.append({**state, "person": person_summary(person), "totalDuration": float(total)})
    return result


# --- transitions ---------------------------------------------------------------------------


async def _submission(
    context: RequestContext, event_id: str, *, with_approvals: bool = False
) -> Submission:
    """The submit event `id` with its timesheet locked (one read: see `lock_submission`)."""
    found = await lock_submission(context.session, context.org_id, event_id,
                                  with_approvals=with_approvals)
    if found is None:
        raise NotFound("id", event_id, "approval event")
    if found.event.kind not in SUBMIT_KINDS:
        raise BadInput("id", f"is not a submit event; use its submitId {found.event.submit_id}")
    return found


@mutation.field("approveTimesheet")
async def resolve_approve(_root: Any, info: Any, id: str) -> EventRow:
    context: RequestContext = info.context
    submission = await _submission(context, id, with_approvals=True)
    event = await approve(caller_actor(context), submission)
    context.decided[id] = submission
    context.after_commit.append(KICK)
    return event


@mutation.field("rejectTimesheet")
async def resolve_reject(
    _root: Any, info: Any, id: str, stage: int, comment: str
) -> EventRow:
    context: RequestContext = info.context
    if not (comment or "").strip():
        raise BadInput("comment", "a reason is always required to reject a timesheet")
    submission = await _submission(context, id)
    event = await reject(caller_actor(context), submission, stage, comment)
    context.decided[id] = submission
    context.after_commit.append(KICK)
    return event


@mutation.field("sendTimesheetReminder")
async def resolve_send_reminder(
    _root: Any, info: Any, personIds: Sequence[str], startTime: int, endTime: int
) -> bool:
    """A one-off reminder to each person who has not submitted the period (draft, rejected or
    empty); never to a person whose timesheet is submitted or approved."""
    context: RequestContext = info.context
    _check_period(startTime, endTime)
    persons = await get_many_in_org(context.session, Person, context.org_id, personIds,
                                    "personIds", "person")
    for person in persons:
        if person.id != context.person.id and not (
            context.is_admin or person.id in await context.managed_person_ids()
        ):
            raise PermissionDenied("you may remind only the people you manage")
    period = period_label(startTime, endTime)
    # Read in a few statements for everyone (the transaction holds the write lock).
    sheets = await ov.timesheets_for_period(context.session, context.org_id,
                                            [p.id for p in persons], startTime, endTime)
    contents = await ov.content_by_person(context.session, context.org_id,
                                          [p.id for p in persons], startTime, endTime)
    events: list[dict[str, Any]] = []
    messages: list[tuple[dict[str, Any], list[tuple[str, str]]]] = []
    for person in persons:
        timesheet = sheets.get(person.id)
        status = timesheet.status if timesheet is not None else STATUS_DRAFT
        if status in (STATUS_SUBMITTED, STATUS_APPROVED):
            continue
        entries, total = contents.get(person.id, (0, 0))
        events.append({
            "person": {"id": person.id, "name": person.name, "email": person.email},
            "startTime": startTime,
            "endTime": endTime,
            "status": status,
            "entries": entries,
            "totalDuration": total,
            "by": {"id": context.person.id, "name": context.person.name},
        })
        messages.append(({
            "id": new_id(), "author_id": context.person.id, "date_ms": context.now_ms,
            "type": "message", "content": f"Reminder: please submit your timesheet for {period}",
            "reference_id": person.id, "reference_type": "person",
        }, [(person.id, "person")]))
    await enqueue_many(context.session, context.org_id, EVENT_TIMESHEET_REMINDER, events,
                       context.now_ms)
    await journal.write_messages(context.session, context.org_id, messages)
    context.after_commit.append(KICK)
    return True


BINDABLES = [query, mutation]
