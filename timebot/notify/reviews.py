"""The review-request decision: when a timesheet reaches a stage (approvalEventUpdate with
status "s"), which of that stage's approvers are asked now.

The current approval state is read first: a lagging event for a stage that has moved on, or a
decided or replaced submission, asks nobody. An approver who is no longer pending is skipped;
one who chose the daily digest is marked so (the digest lists the request). The dedupe key
(submit event, stage, approver, and a workflow restart's round) makes each request go out
once however many times the event is dispatched and however many processes run.

While a pending approver of a quorum-"any" stage is away (timebot.notify.away_asks), each other
pending approver is asked with the reason, once per away approver: on the stage's first
dispatch that is their one request; later (the absence became known after they were asked,
e.g. by the away approver's auto-reply, and the event is dispatched again) a second one."""

from __future__ import annotations

import structlog

from timebot.events.bus import ServiceEvent
from timebot.notify.approvals import DIGEST, preference
from timebot.notify.away_asks import (
    QUORUM,
    AwayAsk,
    AwayReason,
    away_asks,
    away_dedupe_key,
    away_reason,
    stage_quorum,
)
from timebot.notify.away_facts import away_facts_with
from timebot.notify.decisions import AlreadySent, ReviewRequest
from timebot.notify.ground import Ground
from timebot.notify.review_reads import submission_reads, submit_event_rider

log = structlog.get_logger("timebot.notify.reviews")


def round_mark(event: ServiceEvent) -> str:
    """What tells a workflow restart's round (same submission, asked again) from the first."""
    return f":r{event.timestamp_ms}" if event.data.get("action") == "restarted" else ""


def review_dedupe_key(submit_id: str, stage: int, approver_id: str, round_mark: str = "") -> str:
    return f"review:{submit_id}:{stage}:{approver_id}{round_mark}"


async def review_requests(
    runtime: Ground, event: ServiceEvent, already_sent: AlreadySent
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
    key = await runtime.directory.integration_key(event.organisation_id)
    recorded, carried = await away_facts_with(runtime, key, event.organisation_id,
                                              [p["id"] for p in wanted],
                                              submit_event_rider(submit_id))
    now_ms = runtime.clock.now_ms()
    someone_away = any(
        away_reason("", recorded.get(p["id"], []), now_ms) for p in wanted
    )
    if not todo and not someone_away:
        return []
    reads = await submission_reads(runtime.client, key, submit_id, carried)
    if reads is None or not reads[0].waits_at(submit_id, stage):
        log.info("review_request_stale", submit=submit_id, stage=stage)
        return []
    snapshot, summary = reads
    still = snapshot.pending_ids()
    asks: list[AwayAsk] = []
    if someone_away:
        owner = (await runtime.client.execute(QUORUM, {"id": snapshot.person_id}, apikey=key)
                 ).get("getPerson")
        asks = away_asks(snapshot.pending, recorded, stage_quorum(owner, stage), now_ms)
    todo_ids = {p["id"] for p in todo}
    requests: list[ReviewRequest] = []
    for approver in wanted:
        approver_id = approver["id"]
        if approver_id not in still:
            continue
        normal = review_dedupe_key(submit_id, stage, approver_id, mark)
        # Asked before because someone was away (who may be back now): asked all the same.
        earlier = [away_dedupe_key(normal, pid) for pid, facts in recorded.items()
                   if facts and pid != approver_id and pid in still]
        asked = approver_id not in todo_ids or any([await already_sent(k) for k in earlier])
        unsent = [ask for ask in asks if ask.approver_id == approver_id
                  and not await already_sent(away_dedupe_key(normal, ask.away_id))]
        unsent_pairs: list[tuple[str, AwayReason | None]]
        if not asked and not unsent:
            unsent_pairs = [(normal, None)]
        elif not asked:
            # First asked now, while someone is away: one request, with the reason.
            unsent_pairs = [(away_dedupe_key(normal, unsent[0].away_id), unsent[0].reason)]
        else:
            unsent_pairs = [(away_dedupe_key(normal, ask.away_id), ask.reason)
                            for ask in unsent]
        for dedupe_key, reason in unsent_pairs:
            requests.append(ReviewRequest(
                organisation_id=event.organisation_id,
                submit_id=submit_id,
                timesheet_id=str(data.get("timesheetId") or ""),
                stage=stage,
                stage_count=int(data.get("stageCount") or snapshot.stage_count or 1),
                approver_id=approver_id,
                summary=summary,
                dedupe_key=dedupe_key,
                digest=await preference(runtime, event.organisation_id, approver_id) == DIGEST,
                reason=reason,
            ))
    return requests
