"""Writing the workflow's records: the submit event (an object the submission keeps changing),
the events that follow it, and approvals."""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import Table, insert

from plumbing.db import write_rows
from plumbing.ids import new_id
from service.timesheets.actor import Actor
from service.timesheets.models import Approval, ApprovalEvent, Timesheet
from service.timesheets.rows import SheetLike

# Events other than the submit event (approve, reject, auto_approve, restart) and approvals
# are written as they are made (Core INSERTs built once): nothing reads them back as objects.
_INSERT_EVENT = insert(cast(Table, ApprovalEvent.__table__))
_INSERT_APPROVAL = insert(cast(Table, Approval.__table__))


async def record_event(
    timesheet: SheetLike, kind: str, status: str, stage: int, actor: Actor, **extra: Any
) -> None:
    """An approval event that follows the submit event (`submit_id=` among `extra`)."""
    await write_rows(actor.session, _INSERT_EVENT, {
        "id": new_id(),
        "organisation_id": timesheet.organisation_id,
        "timesheet_id": timesheet.id,
        "person_id": timesheet.person_id,
        "start_ms": timesheet.start_ms,
        "end_ms": timesheet.end_ms,
        "kind": kind,
        "status": status,
        "stage": stage,
        "ts_ms": actor.now_ms,
        "by_id": actor.id,
        **extra,
    })


async def record_approval(
    actor: Actor, timesheet: SheetLike, stage: int, approver_id: str, *,
    carried_over: bool = False,
) -> None:
    """The approver's approval of the stage in the submission's current round."""
    assert timesheet.submit_id is not None
    await write_rows(actor.session, _INSERT_APPROVAL, {
        "id": new_id(),
        "organisation_id": timesheet.organisation_id,
        "timesheet_id": timesheet.id,
        "submit_id": timesheet.submit_id,
        "round": timesheet.round,
        "stage": stage,
        "approver_id": approver_id,
        "ts_ms": actor.now_ms,
        "carried_over": carried_over,
    })


def add_submit_event(
    timesheet: Timesheet, kind: str, status: str, stage: int, actor: Actor, **extra: Any
) -> ApprovalEvent:
    """The submit event: an object, the handle of the submission (returned, and changed as the
    submission moves on)."""
    event = ApprovalEvent(
        id=new_id(),
        organisation_id=timesheet.organisation_id,
        timesheet_id=timesheet.id,
        person_id=timesheet.person_id,
        start_ms=timesheet.start_ms,
        end_ms=timesheet.end_ms,
        kind=kind,
        status=status,
        stage=stage,
        ts_ms=actor.now_ms,
        by_id=actor.id,
        **extra,
    )
    actor.session.add(event)
    return event
