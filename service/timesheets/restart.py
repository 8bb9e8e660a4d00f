"""Resubmission after an approver's edit: the submitted timesheet's workflow restarts from its
first stage, with approvers resolved again from the changed content."""

from __future__ import annotations

from service.models import Person
from service.timesheets import journal
from service.timesheets import stages as st
from service.timesheets.actor import Actor, period_label, stage_label
from service.timesheets.content import load_content, resolve_stages
from service.timesheets.locks import lock_timesheet
from service.timesheets.models import STATUS_SUBMITTED, Timesheet
from service.timesheets.notify import notify
from service.timesheets.pending import record_pending
from service.timesheets.progress import enter_stage, finish_approved
from service.timesheets.records import record_event
from service.timesheets.state import current_pending, submit_event


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
    enter_stage(timesheet, first, actor.now_ms)
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
