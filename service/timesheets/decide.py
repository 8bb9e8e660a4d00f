"""An approver's decision on a submission: approve the current stage (an administrator: the
whole timesheet), or reject it with a reason."""

from __future__ import annotations

from service.errors import BadInput, PermissionDenied, RuleViolation
from service.timesheets import journal
from service.timesheets import stages as st
from service.timesheets.actor import STATUS_WORDS, Actor, period_label, stage_label
from service.timesheets.locks import Submission, save_submission
from service.timesheets.models import (
    STATUS_APPROVED,
    STATUS_REJECTED,
    STATUS_SUBMITTED,
)
from service.timesheets.notify import notify
from service.timesheets.progress import advance, finish_approved
from service.timesheets.records import record_approval, record_event
from service.timesheets.rows import EventRow, SheetLike
from service.timesheets.state import approvals_of, current_pending, people


def _moved_on(timesheet: SheetLike, caller_id: str) -> str | None:
    """When the caller approves stages that are already done: the refusal naming the current."""
    for index, stage in enumerate(timesheet.stages):
        if index < timesheet.stage and caller_id in (stage.get("approvers") or []):
            return (
                f"{stage_label(timesheet.stages, index)} has already been approved; the "
                f"timesheet is now at {stage_label(timesheet.stages, timesheet.stage)}"
            )
    return None


async def approve(actor: Actor, submission: Submission) -> EventRow:
    """An approval by the caller: of the current stage if they are one of its approvers, else
    (administrators) of the whole timesheet. `submission`: from `lock_submission`; what the
    approval changes of it is written by `save_submission` at the end."""
    assert actor.person is not None
    session = actor.session
    event, timesheet = submission.event, submission.timesheet
    caller = actor.person
    if caller.id == timesheet.person_id:
        raise RuleViolation("no one may approve their own timesheet (administrators included)")
    if timesheet.submit_id != event.id:
        raise RuleViolation(
            f"this submission was replaced by a later one (submit event {timesheet.submit_id})"
        )
    period = period_label(timesheet.start_ms, timesheet.end_ms)
    if timesheet.status != STATUS_SUBMITTED:
        raise RuleViolation(
            f"the timesheet for {period} is {STATUS_WORDS[timesheet.status]}, "
            f"not awaiting approval"
        )
    approvals = (
        submission.approvals if submission.approvals is not None
        else await approvals_of(session, timesheet)
    )
    index = timesheet.stage
    stage = timesheet.stages[index]
    here = stage_label(timesheet.stages, index)
    if caller.id in (stage.get("approvers") or []):
        if caller.id in approvals.get(index, set()):
            pending = current_pending(timesheet, approvals)
            found = await people(session, timesheet.organisation_id, pending)
            raise RuleViolation(
                f"you have already approved {here}; it awaits "
                + ", ".join(found[p].name for p in pending if p in found)
            )
        override = False
    elif actor.is_admin:
        override = True
    else:
        moved = _moved_on(timesheet, caller.id)
        if moved is not None:
            raise RuleViolation(moved)
        raise PermissionDenied(f"you are not an approver of the current stage ({here})")
    await record_approval(actor, timesheet, index, caller.id)
    approvals.setdefault(index, set()).add(caller.id)
    timesheet.updated_ms = actor.now_ms
    note = ", administrator override of every remaining stage" if override else ""
    entry_id = await journal.write_entry(
        session, timesheet, journal.APPROVED, index, caller.id,
        f"Approved by {caller.name} ({here}{note})", actor.now_ms,
    )
    if override:
        await record_event(timesheet, "approve", STATUS_APPROVED, index, actor,
                           submit_id=event.id, system_action="adminOverride")
        await finish_approved(actor, timesheet, event, automatic=False, ahead=submission.ahead)
        await save_submission(session, submission)
        return event
    before = timesheet.stage
    await advance(actor, timesheet, event, approvals, index, action="approved",
                  ahead=submission.ahead)
    await record_event(timesheet, "approve", timesheet.status, before, actor,
                       submit_id=event.id)
    if timesheet.status == STATUS_SUBMITTED and timesheet.stage != before:
        # The next stage's approvers see the request in their Journal.
        await journal.write_mentions(
            session, timesheet.organisation_id, entry_id,
            [(p, "person") for p in current_pending(timesheet, approvals)], start=1,
        )
    await save_submission(session, submission)
    return event


async def reject(
    actor: Actor, submission: Submission, stage: int, comment: str
) -> EventRow:
    """Submitted (current stage) or approved (admins, last-stage approvers) -> rejected.
    `submission`: from `lock_submission`; what the rejection changes of it is written by
    `save_submission` at the end."""
    assert actor.person is not None
    session = actor.session
    reason = (comment or "").strip()
    if not reason:
        raise BadInput("comment", "a reason is always required to reject a timesheet")
    event, timesheet = submission.event, submission.timesheet
    caller = actor.person
    if caller.id == timesheet.person_id:
        raise RuleViolation("no one may reject their own timesheet")
    if timesheet.submit_id != event.id:
        raise RuleViolation(
            f"this submission was replaced by a later one (submit event {timesheet.submit_id})"
        )
    period = period_label(timesheet.start_ms, timesheet.end_ms)
    here = stage_label(timesheet.stages, timesheet.stage)
    if timesheet.status == STATUS_SUBMITTED:
        approvers = timesheet.stages[timesheet.stage].get("approvers") or []
        if caller.id not in approvers and not actor.is_admin:
            moved = _moved_on(timesheet, caller.id)
            if moved is not None:
                raise RuleViolation(moved)
            raise PermissionDenied(f"you are not an approver of the current stage ({here})")
        if stage != timesheet.stage:
            raise BadInput(
                "stage", f"the timesheet is at {here}, not stage {stage}; reject the current stage"
            )
    elif timesheet.status == STATUS_APPROVED:
        last = st.last_active_stage(timesheet.stages)
        last_approvers = (timesheet.stages[last].get("approvers") or []) if last is not None else []
        if not actor.is_admin and caller.id not in last_approvers:
            raise PermissionDenied(
                "an approved timesheet may be rejected only by an administrator or an "
                "approver of its last stage"
            )
        if stage != timesheet.stage:
            raise BadInput(
                "stage", f"the approved timesheet ended at {here}, not stage {stage}"
            )
    else:
        raise RuleViolation(
            f"the timesheet for {period} is {STATUS_WORDS[timesheet.status]}; only a submitted "
            f"or approved timesheet can be rejected"
        )
    timesheet.status = STATUS_REJECTED
    timesheet.rejected_by_id = caller.id
    timesheet.updated_ms = actor.now_ms
    event.status = STATUS_REJECTED
    event.rejected_stage = stage
    event.comment = reason
    await record_event(timesheet, "reject", STATUS_REJECTED, stage, actor, submit_id=event.id,
                       comment=reason, rejected_stage=stage)
    await journal.write_entry(
        session, timesheet, journal.REJECTED, stage, caller.id,
        f"Rejected by {caller.name} ({here}): {reason}", actor.now_ms,
    )
    await notify(actor, timesheet, "rejected", reason, ahead=submission.ahead)
    await save_submission(session, submission)
    return event
