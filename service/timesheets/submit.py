"""Submission: a draft or rejected timesheet goes to its first open stage, or is approved at once
when no stage has anyone to approve it. The checks (the period's bounds, overlaps, a timesheet
already awaiting approval or approved) come before anything is written."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from plumbing.ids import new_id
from service.absences import only_unreviewed
from service.errors import BadInput, RuleViolation
from service.models import Person, TimeRecord
from service.timesheets import changes as ch
from service.timesheets import journal
from service.timesheets import stages as st
from service.timesheets.actor import MAX_PERIOD_MS, STATUS_WORDS, Actor, period_label, stage_label
from service.timesheets.content import load_content, resolve_stages
from service.timesheets.locks import lock_timesheet
from service.timesheets.models import (
    STATUS_APPROVED,
    STATUS_DRAFT,
    STATUS_REJECTED,
    STATUS_SUBMITTED,
    ApprovalEvent,
    Timesheet,
)
from service.timesheets.notify import notify
from service.timesheets.pending import record_pending
from service.timesheets.progress import advance, carry_over, enter_stage, finish_approved
from service.timesheets.records import add_submit_event
from service.timesheets.state import approvals_of, current_pending

# --- checks --------------------------------------------------------------------------------


def _check_bounds(start_ms: int, end_ms: int) -> None:
    if end_ms <= start_ms:
        raise BadInput("endTime", "must be after startTime")
    if end_ms - start_ms > MAX_PERIOD_MS:
        raise BadInput("endTime", "a timesheet period is at most 366 days")


async def _same_or_refused(
    session: AsyncSession, owner: Person, start_ms: int, end_ms: int
) -> Timesheet | None:
    """The timesheet with exactly these bounds, if there is one. Refused when a submitted,
    approved or rejected timesheet overlaps the period with other bounds: that period is the
    one to submit. (One read: the same bounds overlap the period too.)"""
    same: Timesheet | None = None
    for other in await session.scalars(
        select(Timesheet).where(
            Timesheet.organisation_id == owner.organisation_id,
            Timesheet.person_id == owner.id,
            Timesheet.start_ms < end_ms,
            Timesheet.end_ms > start_ms,
        ).order_by(Timesheet.start_ms, Timesheet.id)
    ):
        if other.start_ms == start_ms and other.end_ms == end_ms:
            same = other
        elif other.status != STATUS_DRAFT:
            raise RuleViolation(
                f"the period overlaps the {STATUS_WORDS[other.status]} timesheet for "
                f"{period_label(other.start_ms, other.end_ms)}; submit that period instead"
            )
    return same


def _check_open(timesheet: Timesheet) -> None:
    """Refused when the timesheet already awaits approval or is approved."""
    period = period_label(timesheet.start_ms, timesheet.end_ms)
    if timesheet.status == STATUS_SUBMITTED:
        raise RuleViolation(
            f"the timesheet for {period} is already submitted and awaits "
            f"{stage_label(timesheet.stages, timesheet.stage)}"
        )
    if timesheet.status == STATUS_APPROVED:
        raise RuleViolation(f"the timesheet for {period} is already approved")


# --- writes --------------------------------------------------------------------------------


async def _timesheet_to_submit(
    actor: Actor, owner: Person, start_ms: int, end_ms: int
) -> Timesheet:
    """The timesheet with exactly these bounds, locked and open to submission, else a new
    draft (refused when someone else created it meanwhile)."""
    session = actor.session
    existing = await _same_or_refused(session, owner, start_ms, end_ms)
    if existing is not None:
        timesheet = await lock_timesheet(session, existing.id)
        _check_open(timesheet)
        return timesheet
    timesheet = Timesheet(
        id=new_id(),
        organisation_id=owner.organisation_id,
        person_id=owner.id,
        start_ms=start_ms,
        end_ms=end_ms,
        status=STATUS_DRAFT,
        stage=0,
        round=0,
        stages=[],
        snapshot={},
        updated_ms=actor.now_ms,
    )
    try:
        async with session.begin_nested():
            session.add(timesheet)
            await session.flush()
    except IntegrityError:
        raise RuleViolation(
            f"the timesheet for {period_label(start_ms, end_ms)} was just submitted by "
            f"someone else"
        ) from None
    return timesheet


async def _previous_approvers_by_type(
    session: AsyncSession, timesheet: Timesheet
) -> dict[str, set[str]]:
    """{stage type: approver ids} of the previous submission's current round."""
    found: dict[str, set[str]] = {}
    for stage, approvers in (await approvals_of(session, timesheet)).items():
        if 0 <= stage < len(timesheet.stages):
            found.setdefault(timesheet.stages[stage]["type"], set()).update(approvers)
    return found


def _carried(
    resolved: list[st.ResolvedStage],
    directory: st.Directory,
    touched: tuple[set[str], set[str]],
    previous_by_type: dict[str, set[str]],
) -> dict[int, set[str]]:
    """{stage: approvers} whose earlier approval stands: a manager who approved before and
    whose projects / tasks did not change stays approved."""
    affected_pms, affected_tms = ch.affected_managers(
        *touched, directory.project_manager_ids, directory.task_manager_ids
    )
    carried: dict[int, set[str]] = {}
    for index, resolved_stage in enumerate(resolved):
        if resolved_stage.skipped:
            continue
        keep = ch.carried_over(
            resolved_stage.type, resolved_stage.approvers,
            previous_by_type, affected_pms, affected_tms,
        )
        if keep:
            carried[index] = keep
    return carried


def _start_submission(
    actor: Actor,
    timesheet: Timesheet,
    resolved: list[st.ResolvedStage],
    content: dict[str, dict[str, Any]],
    changes: ch.Changes | None,
    *,
    auto: bool,
) -> ApprovalEvent:
    """The submit event, and the timesheet submitted with its new stages and snapshot."""
    event = add_submit_event(
        timesheet,
        "auto_submit" if auto else "submit",
        STATUS_SUBMITTED,
        0,
        actor,
        changes=changes.as_json() if changes is not None else None,
        system_action="autoSubmit" if auto else ("resubmit" if changes is not None else None),
    )
    event.submit_id = event.id
    timesheet.submit_id = event.id
    timesheet.round = 0
    timesheet.stages = [stage.as_json() for stage in resolved]
    timesheet.snapshot = content
    timesheet.rejected_by_id = None
    timesheet.updated_ms = actor.now_ms
    timesheet.status = STATUS_SUBMITTED
    timesheet.stage = 0
    return event


async def submit(
    actor: Actor, owner: Person, start_ms: int, end_ms: int, *, auto: bool = False,
    records: Sequence[TimeRecord] | None = None,
) -> ApprovalEvent:
    """Draft or rejected -> submitted (or approved at once when there is nothing to approve).
    `records`: every record of the period, when the caller read them in this transaction."""
    session = actor.session
    _check_bounds(start_ms, end_ms)
    timesheet = await _timesheet_to_submit(actor, owner, start_ms, end_ms)

    resubmission = timesheet.status == STATUS_REJECTED
    previous = dict(timesheet.snapshot or {})
    content, _total = await load_content(
        session, owner.organisation_id, owner.id, start_ms, end_ms, records
    )
    changes = ch.diff(previous, content) if resubmission else None
    touched: tuple[set[str], set[str]] = (set(), set())
    if changes is not None:
        touched = ch.touched(previous, content, changes)
    resolved, directory = await resolve_stages(actor, owner, content, *touched)
    previous_by_type = (
        await _previous_approvers_by_type(session, timesheet) if resubmission else {}
    )
    event = _start_submission(actor, timesheet, resolved, content, changes, auto=auto)
    approved_at_once = not any(not stage.skipped for stage in resolved) or (
        not content and await only_unreviewed(session, owner.organisation_id, owner.id,
                                              start_ms, end_ms))
    if not approved_at_once:
        # Set before the flush: the timesheet is written once.
        enter_stage(timesheet, st.first_open_stage(timesheet.stages, 0, {}), actor.now_ms)
        event.stage = timesheet.stage
    await session.flush()
    await record_pending(session, timesheet)

    period = period_label(start_ms, end_ms)
    by = "" if auto else f" by {actor.name}"
    kind = journal.AUTO_SUBMITTED if auto else journal.SUBMITTED
    if approved_at_once:
        await journal.write_entry(
            session, timesheet, kind, 0, actor.id, f"Timesheet for {period} submitted{by}",
            actor.now_ms,
        )
        await finish_approved(actor, timesheet, event, automatic=True)
        return event

    carried = (
        _carried(resolved, directory, touched, previous_by_type) if changes is not None else {}
    )
    first = timesheet.stage
    await journal.write_entry(
        session, timesheet, kind, first, actor.id,
        f"Timesheet for {period} submitted{by} for approval "
        f"({stage_label(timesheet.stages, first)})",
        actor.now_ms,
        current_pending(timesheet, {}),
    )
    approvals_now = await carry_over(actor, timesheet, carried)
    if carried:
        await advance(actor, timesheet, event, approvals_now, first, action="submitted")
    else:
        # A new submission: nothing approved yet in its round.
        await notify(actor, timesheet, "submitted", approvals={})
    return event
