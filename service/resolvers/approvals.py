"""Timesheet approvals: workflow configuration, submit / approve / reject, reminders, and
what waits for whom. The rules live in service/approvals; this module reads arguments,
checks who may ask, and shapes results."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ariadne import MutationType, ObjectType, QueryType, ScalarType
from graphql import GraphQLError
from sqlalchemy import bindparam, select

from plumbing.ids import new_id
from service.approvals import journal
from service.approvals import settings as cfg
from service.approvals import stages as st
from service.approvals.workflow import (
    Actor,
    PeriodState,
    Submission,
    approvals_detail,
    approvals_of,
    approve,
    covering_timesheet,
    current_pending,
    load_content,
    lock_submission,
    people,
    period_label,
    period_state,
    reject,
    submit,
    timesheet_for_period,
)
from service.errors import BadInput, NotFound, PermissionDenied
from service.graphql.context import RequestContext
from service.graphql.fastpath import plain
from service.graphql.lookahead import requested
from service.lookup import get_in_org, get_many_in_org
from service.models import Organisation, Person, Tag, TimeRecord
from service.models.approval import (
    STATUS_APPROVED,
    STATUS_DRAFT,
    STATUS_SUBMITTED,
    ApprovalEvent,
    JournalMessage,
    Timesheet,
)
from service.webhooks.queue import EVENT_TIMESHEET_REMINDER, KICK, enqueue

query = QueryType()
mutation = MutationType()
organisation_type = ObjectType("SvcOrganisation")
person_type = ObjectType("SvcPerson")
tag_type = ObjectType("SvcTag")
time_record_type = ObjectType("SvcTimeRecord")
event_type = ObjectType("SvcApprovalEvent")
stage_type_scalar = ScalarType("SvcApprovalStageType")

SUBMIT_KINDS = ("submit", "auto_submit")


@stage_type_scalar.value_parser
def parse_stage_type(value: Any) -> str:
    if isinstance(value, str) and value in st.STAGE_TYPES:
        return value
    raise GraphQLError(
        f"SvcApprovalStageType must be one of {', '.join(st.STAGE_TYPES)}, got {value!r}"
    )


def require_admin(context: RequestContext, what: str) -> None:
    if not context.is_admin:
        raise PermissionDenied(f"only an administrator may {what}")


def actor(context: RequestContext) -> Actor:
    return Actor(context.session, context.organisation, context.person, context.now_ms)


def summary(person: Person | None) -> dict[str, Any] | None:
    if person is None:
        return None
    return {"id": person.id, "name": person.name, "color": person.color}


async def can_view_timesheet(context: RequestContext, timesheet: Timesheet) -> bool:
    """Its owner, whoever may see the owner's data, and anyone asked to approve it."""
    if await context.can_access_person_data(timesheet.person_id):
        return True
    return any(context.person.id in (s.get("approvers") or []) for s in timesheet.stages)


# --- configuration -------------------------------------------------------------------------


async def _validated_stages(
    context: RequestContext, stages: Sequence[Mapping[str, Any] | None] | None
) -> list[dict[str, Any]] | None:
    if stages is None:
        return None
    try:
        parsed = st.parse_stage_inputs(stages)
    except st.StageInputError as error:
        where = f"stages[{error.index}]" + (f".{error.field_name}" if error.field_name else "")
        raise BadInput(where, error.problem) from None
    for index, stage in enumerate(parsed):
        await get_many_in_org(context.session, Person, context.org_id, stage["personIds"],
                              f"stages[{index}].personIds", "person")
        await get_many_in_org(context.session, Tag, context.org_id, stage["tagIds"],
                              f"stages[{index}].tagIds", "tag")
    return parsed


async def _stages_value(context: RequestContext, resolved: cfg.Resolved) -> dict[str, Any] | None:
    if resolved.value is None:
        return {"value": None, "path": []}
    person_ids = [p for s in resolved.value for p in s.get("personIds") or []]
    tag_ids = [t for s in resolved.value for t in s.get("tagIds") or []]
    found = await people(context.session, context.org_id, person_ids)
    tags = {
        t.id: t
        for t in (
            await context.session.scalars(
                select(Tag).where(Tag.organisation_id == context.org_id, Tag.id.in_(tag_ids))
            )
        ).unique()
    } if tag_ids else {}
    return {
        "value": [
            {
                "type": s["type"],
                "quorum": s.get("quorum") or st.QUORUM_ANY,
                "persons": [found[p] for p in s.get("personIds") or [] if p in found],
                "tags": [tags[t] for t in s.get("tagIds") or [] if t in tags],
            }
            for s in resolved.value
        ],
        "path": resolved.path,
    }


@mutation.field("editOrganisationApprovalStages")
async def resolve_edit_organisation_stages(
    _root: Any, info: Any, stages: Sequence[Mapping[str, Any] | None] | None = None
) -> Organisation:
    context: RequestContext = info.context
    require_admin(context, "configure the approval workflow")
    parsed = await _validated_stages(context, stages)
    cfg.set_value(context.organisation, cfg.APPROVAL_STAGES, parsed or None)
    return context.organisation


@mutation.field("editPersonApprovalStages")
async def resolve_edit_person_stages(
    _root: Any, info: Any, id: str, stages: Sequence[Mapping[str, Any] | None] | None = None
) -> Person:
    context: RequestContext = info.context
    require_admin(context, "configure the approval workflow")
    person = await get_in_org(context.session, Person, context.org_id, id, "id", "person")
    cfg.set_value(person, cfg.APPROVAL_STAGES, await _validated_stages(context, stages))
    return person


@mutation.field("editTagApprovalStages")
async def resolve_edit_tag_stages(
    _root: Any, info: Any, id: str, stages: Sequence[Mapping[str, Any] | None] | None = None
) -> Tag:
    context: RequestContext = info.context
    require_admin(context, "configure the approval workflow")
    tag = await get_in_org(context.session, Tag, context.org_id, id, "id", "tag")
    cfg.set_value(tag, cfg.APPROVAL_STAGES, await _validated_stages(context, stages))
    return tag


def _reminder_days(value: int | None) -> int | None:
    if value is not None and not 0 <= value <= 365:
        raise BadInput("approvalReminder", "must be a number of days from 0 (off) to 365")
    return value


def _auto_submit_days(value: int | None) -> int | None:
    if value is not None and not 0 <= value <= 365:
        raise BadInput("autoSubmit", "must be a number of days from 0 to 365 (null: off)")
    return value


async def _set_on(
    context: RequestContext, target: str, entity_id: str | None, key: str, value: Any
) -> Any:
    require_admin(context, "change the timesheet settings")
    entity: Organisation | Person | Tag
    if target == "organisation":
        entity = context.organisation
    elif target == "person":
        entity = await get_in_org(context.session, Person, context.org_id, entity_id, "id",
                                  "person")
    else:
        entity = await get_in_org(context.session, Tag, context.org_id, entity_id, "id", "tag")
    cfg.set_value(entity, key, value)
    return entity


def _bind_setting(name: str, target: str, key: str, argument: str, check: Any = None) -> None:
    async def resolver(_root: Any, info: Any, id: str | None = None, **kwargs: Any) -> Any:
        value = kwargs.get(argument)
        if check is not None:
            value = check(value)
        return await _set_on(info.context, target, id, key, value)

    mutation.set_field(name, resolver)


for _target, _cap in (("organisation", "Organisation"), ("tag", "Tag"), ("person", "Person")):
    _bind_setting(f"edit{_cap}TimeSettingsApprovalReminder", _target, cfg.APPROVAL_REMINDER,
                  "approvalReminder", _reminder_days)
    _bind_setting(f"edit{_cap}TimeSettingsOwnerOrAdminOnly", _target, cfg.OWNER_OR_ADMIN_ONLY,
                  "ownerOrAdminOnly")
    _bind_setting(f"edit{_cap}TimeSettingsOnlyAdminEditsOthers", _target,
                  cfg.ONLY_ADMIN_EDITS_OTHERS, "onlyAdminEditsOthers")
    _bind_setting(f"edit{_cap}TimeSettingsAutoSubmit", _target, cfg.AUTO_SUBMIT, "autoSubmit",
                  _auto_submit_days)


def _time_settings(resolve: Any) -> dict[str, Any]:
    return {
        "approvalReminder": resolve(cfg.APPROVAL_REMINDER),
        "ownerOrAdminOnly": resolve(cfg.OWNER_OR_ADMIN_ONLY),
        "onlyAdminEditsOthers": resolve(cfg.ONLY_ADMIN_EDITS_OTHERS),
        "autoSubmit": resolve(cfg.AUTO_SUBMIT),
        **{key: resolve(key) for key in cfg.SCHEDULE_SETTINGS},
    }


def _attribute(resolved: cfg.Resolved) -> dict[str, Any]:
    return {"value": resolved.value, "path": resolved.path}


@organisation_type.field("approvalStages")
async def resolve_org_stages(organisation: Organisation, info: Any) -> Any:
    return await _stages_value(
        info.context, cfg.own(organisation, "organisations", cfg.APPROVAL_STAGES)
    )


@organisation_type.field("timeSettings")
async def resolve_org_time_settings(organisation: Organisation, _info: Any) -> Any:
    return _time_settings(lambda key: _attribute(cfg.own(organisation, "organisations", key)))


async def _person_resolved(
    context: RequestContext, person: Person, key: str, *, private: bool = True
) -> cfg.Resolved:
    if private and not await context.can_access_person_data(person.id):
        raise PermissionDenied("only the person, their managers and administrators see this")
    return await cfg.resolve(context.session, context.organisation, person, key)


@person_type.field("approvalStages")
async def resolve_person_stages(person: Person, info: Any) -> Any:
    context: RequestContext = info.context
    return await _stages_value(context, await _person_resolved(context, person,
                                                                cfg.APPROVAL_STAGES))


@person_type.field("timeSettings")
async def resolve_person_time_settings(person: Person, info: Any) -> Any:
    context: RequestContext = info.context
    values = {
        key: _attribute(await _person_resolved(context, person, key, private=False))
        for key in (cfg.APPROVAL_REMINDER, cfg.OWNER_OR_ADMIN_ONLY, cfg.ONLY_ADMIN_EDITS_OTHERS,
                    cfg.AUTO_SUBMIT, *cfg.SCHEDULE_SETTINGS)
    }
    return _time_settings(lambda key: values[key])


def _tag_resolved(context: RequestContext, tag: Tag, key: str) -> cfg.Resolved:
    own = cfg.own(tag, "tags", key)
    if own.value is not None:
        return own
    return cfg.own(context.organisation, "organisations", key)


@tag_type.field("approvalStages")
async def resolve_tag_stages(tag: Tag, info: Any) -> Any:
    context: RequestContext = info.context
    return await _stages_value(context, _tag_resolved(context, tag, cfg.APPROVAL_STAGES))


@tag_type.field("timeSettings")
async def resolve_tag_time_settings(tag: Tag, info: Any) -> Any:
    context: RequestContext = info.context
    return _time_settings(lambda key: _attribute(_tag_resolved(context, tag, key)))


# --- approval events -----------------------------------------------------------------------


@event_type.field("person")
async def resolve_event_person(event: ApprovalEvent, info: Any) -> Person | None:
    context: RequestContext = info.context
    return await context.session.get(Person, event.person_id)


@event_type.field("startTime")
@plain
def resolve_event_start(event: ApprovalEvent, _info: Any) -> int:
    return event.start_ms


@event_type.field("endTime")
@plain
def resolve_event_end(event: ApprovalEvent, _info: Any) -> int:
    return event.end_ms


@event_type.field("ts")
@plain
def resolve_event_ts(event: ApprovalEvent, _info: Any) -> int:
    return event.ts_ms


@event_type.field("submitId")
@plain
def resolve_event_submit_id(event: ApprovalEvent, _info: Any) -> str | None:
    return event.submit_id


@event_type.field("by")
async def resolve_event_by(event: ApprovalEvent, info: Any) -> Any:
    if event.by_id is None:
        return None
    context: RequestContext = info.context
    return summary(await context.session.get(Person, event.by_id))


@event_type.field("timeRecordIds")
@plain
def resolve_event_changes(event: ApprovalEvent, _info: Any) -> Any:
    return event.changes


@event_type.field("rejectedStage")
@plain
def resolve_event_rejected_stage(event: ApprovalEvent, _info: Any) -> int | None:
    return event.rejected_stage


@event_type.field("systemAction")
@plain
def resolve_event_system_action(event: ApprovalEvent, _info: Any) -> str | None:
    return event.system_action


@time_record_type.field("event")
async def resolve_record_event(record: TimeRecord, info: Any) -> ApprovalEvent | None:
    context: RequestContext = info.context
    timesheet = await covering_timesheet(
        context.session, context.org_id, record.person_id, record.start_ms
    )
    if timesheet is None or timesheet.submit_id is None:
        return None
    return await context.session.get(ApprovalEvent, timesheet.submit_id)


# An event with its person (for `person { … }`, asked for by nearly every reader of events).
_EVENT_WITH_PERSON = (
    select(ApprovalEvent, Person)
    .outerjoin(Person, Person.id == ApprovalEvent.person_id)
    .where(ApprovalEvent.id == bindparam("event_id"),
           ApprovalEvent.organisation_id == bindparam("event_org"))
)


async def _visible_event(context: RequestContext, event_id: str, argument: str,
                         with_person: bool = False) -> ApprovalEvent:
    """The event, if the caller may see its timesheet (`can_view_timesheet`); the timesheet is
    read only when the caller may not see the owner's data anyway (an event's person is its
    timesheet's person). `with_person`: its person is read along with it (held for this
    request, `resolve_event_person` then finds it in the session)."""
    if with_person:
        row = (await context.session.execute(
            _EVENT_WITH_PERSON, {"event_id": event_id, "event_org": context.org_id})).first()
        if row is None:
            raise NotFound(argument, event_id, "approval event")
        event = row[0]
        if row[1] is not None:
            context.loaded_ahead.append(row[1])
    else:
        event = await get_in_org(context.session, ApprovalEvent, context.org_id, event_id,
                                 argument, "approval event")
    if await context.can_access_person_data(event.person_id):
        return event
    timesheet = await context.session.get(Timesheet, event.timesheet_id)
    assert timesheet is not None
    if not await can_view_timesheet(context, timesheet):
        raise PermissionDenied("you may not see this person's timesheets")
    return event


@query.field("getApprovalEventById")
async def resolve_get_event(_root: Any, info: Any, id: str) -> ApprovalEvent:
    return await _visible_event(info.context, id, "id", "person" in requested(info))


async def _events(context: RequestContext, person_id: str,
                  period: tuple[int, int] | None) -> list[ApprovalEvent]:
    await get_in_org(context.session, Person, context.org_id, person_id, "personId", "person")
    statement = select(Timesheet).where(
        Timesheet.organisation_id == context.org_id, Timesheet.person_id == person_id
    )
    if period is not None:
        statement = statement.where(Timesheet.start_ms < period[1], Timesheet.end_ms > period[0])
    visible = [t.id for t in await context.session.scalars(statement)
               if await can_view_timesheet(context, t)]
    if not visible:
        return []
    rows = await context.session.scalars(
        select(ApprovalEvent)
        .where(ApprovalEvent.organisation_id == context.org_id,
               ApprovalEvent.timesheet_id.in_(visible))
        .order_by(ApprovalEvent.ts_ms, ApprovalEvent.id)
    )
    return list(rows)


@query.field("getPersonApprovalEvents")
async def resolve_person_events(_root: Any, info: Any, personId: str) -> list[ApprovalEvent]:
    return await _events(info.context, personId, None)


@query.field("getApprovalEvents")
async def resolve_events(
    _root: Any, info: Any, personId: str, startTime: int, endTime: int
) -> list[ApprovalEvent]:
    return await _events(info.context, personId, (startTime, endTime))


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
            "approvedBy": [{"person": summary(found.get(a)), "ts": float(ts)}
                           for a, ts in detail.get(index, [])],
            "pending": [summary(found[p]) for p in waiting if p in found],
        })
    current = timesheet.stage if timesheet.status == STATUS_SUBMITTED else None
    return {
        "status": timesheet.status,
        "currentStage": current,
        "currentStageType": timesheet.stages[current]["type"] if current is not None
        and current < len(timesheet.stages) else None,
        "pendingApprovers": [summary(found[p]) for p in pending if p in found],
        "submitId": timesheet.submit_id,
        "by": summary(found.get(by_id)) if by_id else None,
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


@query.field("getPendingApprovals")
async def resolve_pending(_root: Any, info: Any, showAll: bool | None = None
                          ) -> list[dict[str, Any]]:
    context: RequestContext = info.context
    rows = await context.session.scalars(
        select(Timesheet)
        .where(Timesheet.organisation_id == context.org_id,
               Timesheet.status == STATUS_SUBMITTED)
        .order_by(Timesheet.start_ms, Timesheet.id)
    )
    result = []
    for timesheet in rows:
        approvals = await approvals_of(context.session, timesheet)
        mine = context.person.id in current_pending(timesheet, approvals)
        if not mine and not (showAll and await can_view_timesheet(context, timesheet)):
            continue
        state = await state_of(context, timesheet)
        owner = await context.session.get(Person, timesheet.person_id)
        _content, total = await load_content(context.session, context.org_id,
                                             timesheet.person_id, timesheet.start_ms,
                                             timesheet.end_ms)
        result.append({
            **state,
            "person": summary(owner),
            "startTime": timesheet.start_ms,
            "endTime": timesheet.end_ms,
            "totalDuration": float(total),
        })
    return result


@query.field("getTeamApprovalStates")
async def resolve_team_states(
    _root: Any, info: Any, personIds: Sequence[str], startTime: int, endTime: int
) -> list[dict[str, Any]]:
    context: RequestContext = info.context
    _check_period(startTime, endTime)
    persons = await get_many_in_org(context.session, Person, context.org_id, personIds,
                                    "personIds", "person")
    result = []
    for person in persons:
        timesheet = await timesheet_for_period(context.session, context.org_id, person.id,
                                               startTime, endTime)
        if not await context.can_access_person_data(person.id) and not (
            timesheet is not None and await can_view_timesheet(context, timesheet)
        ):
            continue
        state = await state_of(context, timesheet)
        _content, total = await load_content(context.session, context.org_id, person.id,
                                             startTime, endTime)
        result.append({**state, "person": summary(person), "totalDuration": float(total)})
    return result


# --- transitions ---------------------------------------------------------------------------


@mutation.field("submitTimesheet")
async def resolve_submit(
    _root: Any, info: Any, personId: str, startTime: int, endTime: int
) -> ApprovalEvent:
    context: RequestContext = info.context
    owner = await get_in_org(context.session, Person, context.org_id, personId, "personId",
                             "person")
    if not await context.can_access_person_data(owner.id):
        raise PermissionDenied("you may submit only your own timesheet or your people's")
    event = await submit(actor(context), owner, startTime, endTime)
    context.after_commit.append(KICK)
    return event


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
async def resolve_approve(_root: Any, info: Any, id: str) -> ApprovalEvent:
    context: RequestContext = info.context
    event = await approve(actor(context), await _submission(context, id, with_approvals=True))
    context.after_commit.append(KICK)
    return event


@mutation.field("rejectTimesheet")
async def resolve_reject(
    _root: Any, info: Any, id: str, stage: int, comment: str
) -> ApprovalEvent:
    context: RequestContext = info.context
    if not (comment or "").strip():
        raise BadInput("comment", "a reason is always required to reject a timesheet")
    event = await reject(actor(context), await _submission(context, id), stage, comment)
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
    for person in persons:
        timesheet = await timesheet_for_period(context.session, context.org_id, person.id,
                                               startTime, endTime)
        status = timesheet.status if timesheet is not None else STATUS_DRAFT
        if status in (STATUS_SUBMITTED, STATUS_APPROVED):
            continue
        content, total = await load_content(context.session, context.org_id, person.id,
                                            startTime, endTime)
        await enqueue(
            context.session, context.org_id, EVENT_TIMESHEET_REMINDER,
            {
                "person": {"id": person.id, "name": person.name, "email": person.email},
                "startTime": startTime,
                "endTime": endTime,
                "status": status,
                "entries": len(content),
                "totalDuration": total,
                "by": {"id": context.person.id, "name": context.person.name},
            },
            context.now_ms,
        )
        message = JournalMessage(
            organisation_id=context.org_id, author_id=context.person.id,
            date_ms=context.now_ms, type="message",
            content=f"Reminder: please submit your timesheet for {period}",
            reference_id=person.id, reference_type="person",
        )
        message.id = new_id()
        context.session.add(message)
        journal.add_mentions(context.session, context.org_id, message.id,
                             [(person.id, "person")])
    context.after_commit.append(KICK)
    return True


BINDABLES = [
    query,
    mutation,
    organisation_type,
    person_type,
    tag_type,
    time_record_type,
    event_type,
    stage_type_scalar,
]
