"""For a hosted service without webhooks: poll the approval states with the integration key and
feed the bus the same events the webhooks would bring.

Each poll reads `getPendingApprovals(showAll: true)` and compares it with what was seen before
(`polled_approvals`):
- a submission seen for the first time, at a new stage, or with new pending approvers:
  approvalEventUpdate (status "s", the stage, its pending approvers);
- a submission that left the list: its state is read (getApprovalState) and reported as
  approvalEventUpdate with the decision (approved / rejected);
- a stage waiting N days (the owner's approval-reminder setting) -> approvalReminder, every N
  days, as the service would.
Delivery ids are derived from what they report (submission, stage, pending approvers,
decision, reminder number), so two processes polling at once, or a poll repeated after a
crash, queue each event once (the event store keeps one row per delivery id). A lease keeps
the polling itself to one process at a time.
"""

from __future__ import annotations

import hashlib
from typing import Any

import structlog
from sqlalchemy import select

from plumbing.db import unit_of_work
from timebot.client import operation
from timebot.events.bus import APPROVAL_REMINDER, APPROVAL_UPDATE, ServiceEvent, is_interactive
from timebot.events.pending_update import pending_update_data
from timebot.notify.approvals import person_info, setting_of
from timebot.notify.ground import CatchUpGround
from timebot.state.lease import acquire_lease
from timebot.state.models import PolledApproval
from timebot.state.worker import PollingWorker

log = structlog.get_logger("timebot.approval_poller")

DAY_MS = 86_400_000
LEASE_MS = 60_000

ALL_PENDING = operation(
    """query PollPending {
      getPendingApprovals(showAll: true) {
        person { id name } startTime { ts } endTime { ts } status currentStage
        submitId pendingApprovers { id name }
        stageDetails { stage type }
      }
    }"""
)
STATE = operation(
    """query PollState($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) {
      getApprovalState(personId: $p, startTime: $s, endTime: $e) {
        status currentStage submitId by { id name } pendingApprovers { id name }
      }
    }"""
)


def _digest(values: list[str]) -> str:
    return hashlib.sha256(",".join(sorted(values)).encode()).hexdigest()[:16]


class ApprovalPoller(PollingWorker):
    name = "approval-poller"
    LEASE = "approval-poller"

    def __init__(self, runtime: CatchUpGround, poll_seconds: float = 60.0) -> None:
        super().__init__(poll_seconds)
        self.runtime = runtime

    async def run_once(self) -> int:
        """Poll every organisation that no webhook serves; returns how many events were new."""
        if not await acquire_lease(
            self.runtime.state_sessions, self.runtime.clock, self.LEASE, self.owner, LEASE_MS
        ):
            return 0
        new = 0
        for organisation_id in await self.runtime.directory.organisation_ids():
            if await self.runtime.subscriptions.secret_for(organisation_id) is not None:
                continue  # its webhooks bring the events
            try:
                new += await self.poll_organisation(organisation_id)
            except Exception:
                log.exception("approval_poll_failed", organisation=organisation_id)
        return new

    async def _emit(
        self, organisation_id: str, kind: str, delivery_id: str, timestamp_ms: int,
        data: dict[str, Any],
    ) -> int:
        event = ServiceEvent(delivery_id, kind, organisation_id, timestamp_ms, data)
        if await self.runtime.events.accept(event):
            self.runtime.event_worker.wake_for(is_interactive(event))
            return 1
        return 0

    async def poll_organisation(self, organisation_id: str) -> int:
        runtime = self.runtime
        now = runtime.clock.now_ms()
        key = await runtime.directory.integration_key(organisation_id)
        pending = (await runtime.client.execute(ALL_PENDING, apikey=key)).get(
            "getPendingApprovals"
        ) or []
        async with runtime.read_sessions() as session:
            seen = {
                row.submit_id: row for row in await session.scalars(
                    select(PolledApproval).where(PolledApproval.organisation_id == organisation_id)
                )
            }
        new = 0
        current: set[str] = set()
        reminder_days: dict[str, int | None] = {}
        for item in pending:
            submit_id = item.get("submitId")
            if item.get("status") != "s" or not submit_id:
                continue
            current.add(submit_id)
            stage = int(item.get("currentStage") or 0)
            approvers = [p for p in item.get("pendingApprovers") or [] if p]
            ids = [str(p["id"]) for p in approvers]
            data = pending_update_data(item, submit_id, stage, approvers)
            row = seen.get(submit_id)
            stage_moved = row is None or row.stage != stage
            newcomers = row is not None and bool(set(ids) - set(row.pending or []))
            if stage_moved or newcomers:
                action = "submitted" if row is None else "approved"
                new += await self._emit(
                    organisation_id, APPROVAL_UPDATE,
                    f"poll:{submit_id}:s:{stage}:{_digest(ids)}", now,
                    {"action": action, **data},
                )
            since = now if stage_moved or row is None else row.stage_since_ms
            reminders = 0 if stage_moved or row is None else row.reminders
            if not stage_moved:
                person_id = str(item["person"]["id"])
                if person_id not in reminder_days:
                    owner = await person_info(runtime.client, key, person_id) or {}
                    reminder_days[person_id] = setting_of(owner, "approvalReminder")
                days = reminder_days[person_id]
                if days and days > 0:
                    due = (now - since) // (days * DAY_MS)
                    while reminders < due:
                        reminders += 1
                        new += await self._emit(
                            organisation_id, APPROVAL_REMINDER,
                            f"poll:{submit_id}:{stage}:reminder:{reminders}",
                            since + reminders * days * DAY_MS,
                            {"action": "reminder", **data},
                        )
            await self._store(organisation_id, submit_id, item, stage, ids, since, reminders, now)
        for submit_id, row in seen.items():
            if submit_id in current:
                continue
            state = (
                await runtime.client.execute(
                    STATE, {"p": row.person_id, "s": row.start_ms, "e": row.end_ms}, apikey=key
                )
            ).get("getApprovalState") or {}
            status = state.get("status")
            if state.get("submitId") == submit_id and status in ("a", "r"):
                new += await self._emit(
                    organisation_id, APPROVAL_UPDATE, f"poll:{submit_id}:{status}", now,
                    {
                        "action": "approved" if status == "a" else "rejected",
                        "submitId": submit_id,
                        "person": {"id": row.person_id},
                        "startTime": row.start_ms,
                        "endTime": row.end_ms,
                        "status": status,
                        "stage": state.get("currentStage"),
                        "pendingApprovers": [],
                        "by": state.get("by"),
                        "comment": None,
                    },
                )
            async with unit_of_work(runtime.state_sessions) as session:
                gone = await session.get(PolledApproval, (organisation_id, submit_id))
                if gone is not None:
                    await session.delete(gone)
        return new

    async def _store(
        self, organisation_id: str, submit_id: str, item: dict[str, Any], stage: int,
        ids: list[str], since: int, reminders: int, now: int,
    ) -> None:
        async with unit_of_work(self.runtime.state_sessions) as session:
            row = await session.get(PolledApproval, (organisation_id, submit_id))
            if row is None:
                row = PolledApproval(
                    organisation_id=organisation_id, submit_id=submit_id,
                    person_id=str(item["person"]["id"]),
                    start_ms=int(item["startTime"]["ts"]), end_ms=int(item["endTime"]["ts"]),
                )
                session.add(row)
            row.status = "s"
            row.stage = stage
            row.pending = ids
            row.stage_since_ms = since
            row.reminders = reminders
            row.seen_ms = now
