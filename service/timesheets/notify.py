"""The webhook event a transition queues (approvalEventUpdate; the approval reminder queues its
own with the same data): whose timesheet, which period, where it stands, whom it awaits."""

from __future__ import annotations

from typing import Any

from service.models import Person
from service.timesheets.actor import Actor
from service.timesheets.models import STATUS_SUBMITTED
from service.timesheets.rows import ReadAhead, SheetLike
from service.timesheets.state import approvals_of, current_pending, people
from service.webhooks import EVENT_APPROVAL_UPDATE, enqueue


def _summary(person: Person | None) -> dict[str, Any] | None:
    if person is None:
        return None
    return {"id": person.id, "name": person.name, "email": person.email}


async def notify(
    actor: Actor,
    timesheet: SheetLike,
    action: str,
    comment: str | None = None,
    event: str = EVENT_APPROVAL_UPDATE,
    approvals: dict[int, set[str]] | None = None,
    ahead: ReadAhead | None = None,
) -> None:
    """Queue approvalEventUpdate: the event, person, period, status, stage, pending approvers.
    `approvals`: the current round's approvals when the caller has them up to date (else they
    are read; a timesheet that is not awaiting approval has no pending approvers at all).
    `ahead`: the owner and the webhooks, when the caller read them (else they are read)."""
    if timesheet.status != STATUS_SUBMITTED:
        pending: list[str] = []
    else:
        if approvals is None:
            approvals = await approvals_of(actor.session, timesheet)
        pending = current_pending(timesheet, approvals)
    wanted = pending if ahead is not None else [timesheet.person_id, *pending]
    found = await people(actor.session, timesheet.organisation_id, wanted) if wanted else {}
    stage_type = (
        timesheet.stages[timesheet.stage]["type"]
        if 0 <= timesheet.stage < len(timesheet.stages)
        else None
    )
    data = {
        "action": action,
        "submitId": timesheet.submit_id,
        "timesheetId": timesheet.id,
        "person": ahead.owner if ahead is not None
        else _summary(found.get(timesheet.person_id)),
        "startTime": timesheet.start_ms,
        "endTime": timesheet.end_ms,
        "status": timesheet.status,
        "stage": timesheet.stage,
        "stageType": stage_type,
        "stageCount": len(timesheet.stages),
        "pendingApprovers": [_summary(found.get(p)) for p in pending if p in found],
        "by": _summary(actor.person),
        "comment": comment,
    }
    await enqueue(actor.session, timesheet.organisation_id, event, data, actor.now_ms,
                  ahead.webhooks if ahead is not None else None)
