"""The approvalEventUpdate a webhook would have brought for a timesheet that waits, made from
an item of `getPendingApprovals` (its person, period, stage and stage details): what the
reconciler and the approval poller feed the bus when the webhook did not come."""

from __future__ import annotations

from typing import Any


def pending_update_data(item: dict[str, Any], submit_id: str, stage: int,
                        approvers: list[dict[str, Any]]) -> dict[str, Any]:
    """Pure: the event's data, without its `action` (the caller knows whether the timesheet
    was just submitted or moved on a stage)."""
    details = item.get("stageDetails") or []
    return {
        "submitId": submit_id,
        "person": item["person"],
        "startTime": int(item["startTime"]["ts"]),
        "endTime": int(item["endTime"]["ts"]),
        "status": "s",
        "stage": stage,
        "stageType": next(
            (d.get("type") for d in details if d and d.get("stage") == stage), None
        ),
        "stageCount": len(details),
        "pendingApprovers": approvers,
        "by": None,
        "comment": None,
    }
