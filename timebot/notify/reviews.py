"""The review-request decision: when a timesheet reaches a stage (approvalEventUpdate with
status "s"), which of that stage's approvers are asked now.

The current approval state is read first: a lagging event for a stage that has moved on, or a
decided or replaced submission, asks nobody. An approver who is no longer pending is skipped;
one who chose the daily digest is marked so (the digest lists the request). The dedupe key
(submit event, stage, approver, and a workflow restart's round) makes each request go out
once however many times the event is dispatched and however many processes run."""

from __future__ import annotations

import structlog

from timebot.events import ServiceEvent
from timebot.notify.approvals import DIGEST, approval_snapshot, preference
from timebot.notify.decisions import AlreadySent, ReviewRequest
from timebot.runtime import Runtime
from timebot.summary import load_summary

log = structlog.get_logger("timebot.notify.reviews")


def round_mark(event: ServiceEvent) -> str:
    """What tells a workflow restart's round (same submission, asked again) from the first."""
    return f":r{event.timestamp_ms}" if event.data.get("action") == "restarted" else ""


def review_dedupe_key(submit_id: str, stage: int, approver_id: str, round_mark: str = "") -> str:
    return f"review:{submit_id}:{stage}:{approver_id}{round_mark}"


async def review_requests(
    runtime: Runtime, event: ServiceEvent, already_sent: AlreadySent
) -> list[ReviewRequest]:
    """The requests an approvalEventUpdate calls for that `already_sent` does not know."""
    data = event.data
    submit_id = data.get("submitId")
    stage = data.get("stage")
    if data.get("status") != "s" or not submit_id or not isinstance(stage, int):
        return []
    wanted = [p for p in data.get("pendingApprovers") or [] if p and p.get("id")]
    if not wanted:
        return []
    # A workflow restart (same submission, new round) asks the first stage again.
    mark = round_mark(event)
    todo = [
        p for p in wanted
        if not await already_sent(review_dedupe_key(submit_id, stage, p["id"], mark))
    ]
    if not todo:
        return []
    key = await runtime.directory.integration_key(event.organisation_id)
    snapshot = await approval_snapshot(runtime.client, key, submit_id)
    if (
        snapshot is None
        or snapshot.submit_id != submit_id
        or snapshot.status != "s"
        or snapshot.stage != stage
    ):
        log.info("review_request_stale", submit=submit_id, stage=stage)
        return []
    still = snapshot.pending_ids()
    summary = await load_summary(
        runtime.client, key, snapshot.person_id, snapshot.start_ms, snapshot.end_ms, submit_id
    )
    return [
        ReviewRequest(
            organisation_id=event.organisation_id,
            submit_id=submit_id,
            timesheet_id=str(data.get("timesheetId") or ""),
            stage=stage,
            stage_count=int(data.get("stageCount") or snapshot.stage_count or 1),
            approver_id=approver["id"],
            summary=summary,
            dedupe_key=review_dedupe_key(submit_id, stage, approver["id"], mark),
            digest=await preference(runtime, event.organisation_id, approver["id"]) == DIGEST,
        )
        for approver in todo
        if approver["id"] in still
    ]
