"""Resubmission after an approver's edit: the submitted timesheet's workflow restarts from its
first stage, with approvers resolved again from the changed content."""

from __future__ import annotations

from service.approvals import journal
from service.approvals import stages as st
from service.approvals.actor import Actor, period_label, stage_label
from service.approvals.content import load_content, resolve_stages
from service.approvals.locks import lock_timesheet
from service.approvals.notify import notify
from service.approvals.pending import record_pending
from service.approvals.progress import finish_approved
from service.approvals.records import record_event
from service.approvals.state import current_pending, submit_event
from service.models import Person
from service.models.approval import STATUS_SUBMITTED, Timesheet


async def restart(actor: Actor, timesheet: Timesheet) -> None:
    """An approver edited a submitted timesheet: the workflow restarts from the first stage,
    with approvers resolved again from the changed content."""
    session = actor.session
    timesheet = await lock_timesheet(session, timesheet.id)
    if timesheet.status != STATUS_SUBMITTED:
        return
    owner = await session.get(Person, timesheet.person_id)
    assert owner is not None
    content, _total = await load_content(
        session, timesheet.organisation_id, timesheet.person_id,
        timesheet.start_ms, timesheet.end_ms,
    )
    resolved, _directory = await resolve_stages(actor, owner, content)
    event = await submit_event(session, timesheet)
    timesheet.round += 1
    timesheet.stages = [stage.as_json() for stage in resolved]
    timesheet.updated_ms = actor.now_ms
    await record_event(timesheet, "restart", STATUS_SUBMITTED, 0, actor, submit_id=event.id,
                       system_action="restartAfterApproverEdit")
    await record_pending(session, timesheet)
    period = period_label(timesheet.start_ms, timesheet.end_ms)
    if not any(not stage.skipped for stage in resolved):
        await finish_approved(actor, timesheet, event, automatic=True)
        return
    first = st.first_open_stage(timesheet.stages, 0, {})
    timesheet.stage = first
    timesheet.stage_entered_ms = actor.now_ms
    timesheet.reminded_ms = None
    event.stage = first
    event.status = STATUS_SUBMITTED
    await journal.write_entry(
        session, timesheet, journal.SUBMITTED, first, actor.id,
        f"Timesheet for {period} submitted for approval again "
        f"({stage_label(timesheet.stages, first)}): the workflow restarted after an edit by "
        f"{actor.name}",
        actor.now_ms,
        current_pending(timesheet, {}),
    )
    await session.flush()
    await notify(actor, timesheet, "restarted")
