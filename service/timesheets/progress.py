"""Moving a submission through its stages: approvals carried over from the previous
submission, past every stage whose quorum is met, and to approved when none is left."""

from __future__ import annotations

from service.timesheets import journal
from service.timesheets import stages as st
from service.timesheets.actor import Actor, period_label, stage_label
from service.timesheets.models import STATUS_APPROVED, STATUS_SUBMITTED, Timesheet
from service.timesheets.notify import notify
from service.timesheets.records import record_approval, record_event
from service.timesheets.rows import EventLike, ReadAhead, SheetLike
from service.timesheets.state import people


async def carry_over(
    actor: Actor, timesheet: Timesheet, carried: dict[int, set[str]]
) -> dict[int, set[str]]:
    """Record approvals carried over from the previous submission."""
    assert timesheet.submit_id is not None
    found = await people(actor.session, timesheet.organisation_id,
                         [p for ps in carried.values() for p in ps])
    for index, approvers in sorted(carried.items()):
        for approver in sorted(approvers):
            await record_approval(actor, timesheet, index, approver, carried_over=True)
            name = found[approver].name if approver in found else approver
            await journal.write_entry(
                actor.session, timesheet, journal.APPROVED, index, approver,
                f"Approved by {name} ({stage_label(timesheet.stages, index)}), carried over: "
                f"none of their projects or tasks changed since the previous submission",
                actor.now_ms,
            )
    return {index: set(approvers) for index, approvers in carried.items()}


def enter_stage(timesheet: SheetLike, stage: int, now_ms: int) -> None:
    """The timesheet waits at `stage` from `now_ms`: its approvers' reminders count from then."""
    timesheet.stage = stage
    timesheet.stage_entered_ms = now_ms
    timesheet.reminded_ms = None


async def advance(
    actor: Actor,
    timesheet: SheetLike,
    event: EventLike,
    approvals: dict[int, set[str]],
    start: int,
    action: str,
    ahead: ReadAhead | None = None,
) -> None:
    """Move past every stage whose quorum is met; approved when none is left. `ahead`: as
    `notify` takes it."""
    nxt = st.first_open_stage(timesheet.stages, start, approvals)
    if nxt >= len(timesheet.stages):
        await finish_approved(actor, timesheet, event, automatic=False, ahead=ahead)
        return
    if nxt != timesheet.stage:
        enter_stage(timesheet, nxt, actor.now_ms)
    event.stage = timesheet.stage
    event.status = STATUS_SUBMITTED
    await notify(actor, timesheet, action, approvals=approvals, ahead=ahead)


async def finish_approved(
    actor: Actor, timesheet: SheetLike, event: EventLike, *, automatic: bool,
    ahead: ReadAhead | None = None,
) -> None:
    """Approved: by the last stage's quorum or an override, or `automatic`ally when no stage
    has anyone to approve it."""
    period = period_label(timesheet.start_ms, timesheet.end_ms)
    last = st.last_active_stage(timesheet.stages)
    timesheet.status = STATUS_APPROVED
    timesheet.stage = last if last is not None else 0
    timesheet.updated_ms = actor.now_ms
    event.status = STATUS_APPROVED
    event.stage = timesheet.stage
    if automatic:
        why = ("no approval workflow is configured" if not timesheet.stages
               else "no stage has an eligible approver")
        await journal.write_entry(
            actor.session, timesheet, journal.AUTO_APPROVED, timesheet.stage, None,
            f"Timesheet for {period} auto-approved: {why}", actor.now_ms,
        )
        await record_event(timesheet, "auto_approve", STATUS_APPROVED, timesheet.stage, actor,
                           submit_id=event.id, system_action="autoApprove")
    await notify(actor, timesheet, "autoApproved" if automatic else "approved", ahead=ahead)
