"""Reconciliation: no review request is lost, whatever happened to the webhooks.

The service retries a webhook delivery for about 95 s and then gives up; an organisation may
also have been created (and a timesheet submitted in it) before timebot subscribed to it. So
on start, whenever timebot (re)subscribes to an organisation and every few minutes, the
reconciler reads per organisation what the service reports as pending
(`getPendingApprovals(showAll: true)` with the integration key) and compares it with the
review requests already sent: the outbox's review rows (dedupe key
`review:<submit>:<stage>:<approver>`, or the approver reads the daily digest) and, when Slack
is configured, the approval DMs (`slack_outgoing` rows whose ref is
`approval:<submit>:<stage>:<approver>`).

A stage that an event still in the event store (queued, or being dispatched) says waits is
left to that event: a pass during a fan-out does not feed the bus a second event for each
submission it has not reached yet (#40: 861 of 900 in one pass). Whatever else is missing is
fed to the bus as the approvalEventUpdate the webhook would have brought, with a delivery id
derived from what it reports (submission, stage, the approvers still missing): the event store
keeps one row per delivery id, and the subscribers send through the outbox and the Slack queue
with keys derived from (submission, stage, approver), so a concurrent webhook delivery of the
same transition, a repeated pass, or a second process sends nothing twice. Embedded or hosted
service: the same path.

Leases (`scheduler_leases`): `reconcile:<organisation>` while one process reconciles one
organisation, `reconcile-sweep` for the periodic pass over all of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
from typing import Any

import structlog

from plumbing.waiting import wait_for_event
from timebot.client import operation
from timebot.events.bus import APPROVAL_UPDATE, ServiceEvent
from timebot.events.pending_update import pending_update_data
from timebot.notify.ground import CatchUpGround
from timebot.notify.review_requests_sent import CHUNK, unrequested
from timebot.state.lease import acquire_lease, release_lease
from timebot.state.worker import PollingWorker

log = structlog.get_logger("timebot.reconcile")

ORG_LEASE_MS = 60_000
SWEEP_LEASE = "reconcile-sweep"

PENDING = operation(
    """query ReconcilePending {
      getPendingApprovals(showAll: true) {
        person { id name } startTime { ts } endTime { ts } status currentStage
        submitId pendingApprovers { id name }
        stageDetails { stage type }
      }
    }"""
)


def delivery_id(submit_id: str, stage: int, approver_ids: list[str]) -> str:
    """Pure: the delivery id of a reconciled review request (same inputs, same id)."""
    digest = hashlib.sha256(",".join(sorted(approver_ids)).encode()).hexdigest()[:16]
    return f"reconcile:{submit_id}:{stage}:{digest}"


class Reconciler(PollingWorker):
    """Runs a pass at start, when asked (`request`: an organisation was (re)subscribed) and
    every `every_seconds`; an organisation that failed (service unreachable, lease held
    elsewhere) is tried again after `retry_seconds`."""

    name = "reconciler"

    def __init__(
        self, runtime: CatchUpGround, every_seconds: float = 180.0, retry_seconds: float = 2.0
    ) -> None:
        super().__init__(every_seconds)
        self.runtime = runtime
        self.retry_seconds = retry_seconds
        self._requested: set[str] = set()
        self._sweep_due = True
        self._first_sweep = True

    def request(self, organisation_id: str) -> None:
        """Reconcile this organisation soon (called when timebot subscribed to it)."""
        self._requested.add(organisation_id)
        self.wake()

    async def _lease(self, name: str, lease_ms: int) -> bool:
        return await acquire_lease(
            self.runtime.state_sessions, self.runtime.clock, name, self.owner, lease_ms
        )

    async def run_once(self) -> int:
        """One pass: the organisations asked for, and all of them when a sweep is due; returns
        how many review-request events were fed to the bus."""
        organisations, self._requested = self._requested, set()
        if self._sweep_due:
            self._sweep_due = False
            # The first sweep of a process runs whatever the lease says (a restarted process
            # catches up at once); the periodic ones run in one process at a time.
            sweep_ms = int(self.poll_seconds * 1000)
            if await self._lease(SWEEP_LEASE, sweep_ms) or self._first_sweep:
                organisations |= set(await self.runtime.directory.organisation_ids())
            self._first_sweep = False
        return await self.reconcile(organisations)

    async def reconcile(self, organisations: set[str]) -> int:
        """Reconcile these organisations, each under its lease; one that could not be done
        now is asked for again. Returns how many events were new."""
        emitted = 0
        for organisation_id in sorted(organisations):
            lease = f"reconcile:{organisation_id}"
            if not await self._lease(lease, ORG_LEASE_MS):
                self._requested.add(organisation_id)  # another process is at it: look again
                continue
            try:
                emitted += await self.reconcile_organisation(organisation_id)
            except Exception:
                log.exception("reconcile_failed", organisation=organisation_id)
                self._requested.add(organisation_id)
            finally:
                await release_lease(self.runtime.state_sessions, lease, self.owner)
        return emitted

    async def _loop(self) -> None:
        await asyncio.sleep(0.2)  # the embedded service is reached over HTTP: let it listen
        next_sweep = time.monotonic()
        while True:
            if time.monotonic() >= next_sweep:
                self._sweep_due = True
                next_sweep = time.monotonic() + self.poll_seconds
            self._wake.clear()
            try:
                await self.run_once()
            except Exception:  # e.g. the state database went away for a moment
                log.exception("reconcile_pass_failed")
                self._sweep_due = True
            timeout = max(0.0, next_sweep - time.monotonic())
            if self._requested or self._sweep_due:
                timeout = min(timeout, self.retry_seconds)
            await wait_for_event(self._wake, timeout)

    async def stop(self) -> None:
        if self._task is None:
            return
        await super().stop()
        with contextlib.suppress(Exception):  # a successor then sweeps without waiting
            await release_lease(self.runtime.state_sessions, SWEEP_LEASE, self.owner)

    async def reconcile_organisation(self, organisation_id: str) -> int:
        """Feed the bus the review requests the service reports pending and timebot has not
        sent; returns how many events were new. What was sent is read for all the pending
        work at once (review_requests_sent): the pass costs a few statements per `CHUNK`
        requests, not a few per timesheet."""
        runtime = self.runtime
        key = await runtime.directory.integration_key(organisation_id)
        pending = (await runtime.client.execute(PENDING, apikey=key)).get(
            "getPendingApprovals"
        ) or []
        waiting = [(item, str(item["submitId"]), int(item.get("currentStage") or 0),
                    [p for p in item.get("pendingApprovers") or [] if p and p.get("id")])
                   for item in pending
                   if item and item.get("submitId") and item.get("status") == "s"]
        if waiting:  # what an event still queued will ask is not missing, only not yet done
            queued = await runtime.events.waiting_stages(organisation_id)
            waiting = [entry for entry in waiting if (entry[1], entry[2]) not in queued]
        unsent = await unrequested(runtime, organisation_id, (
            (submit_id, stage, str(p["id"]))
            for _item, submit_id, stage, approvers in waiting for p in approvers))
        missing_of: dict[str, tuple[ServiceEvent, list[str]]] = {}
        for item, submit_id, stage, approvers in waiting:
            missing = [str(p["id"]) for p in approvers
                       if (submit_id, stage, str(p["id"])) in unsent]
            if missing:
                event = self._review_request(
                    organisation_id, item, submit_id, stage, approvers, missing)
                missing_of[event.delivery_id] = event, missing
        events = [event for event, _missing in missing_of.values()]
        emitted = 0
        for start in range(0, len(events), CHUNK):  # short write transactions
            for delivery in await runtime.events.accept_new(events[start:start + CHUNK]):
                emitted += 1
                event, missing = missing_of[delivery]
                log.info("review_request_reconciled", organisation=organisation_id,
                         submit=event.data["submitId"], stage=event.data["stage"],
                         approvers=missing)
        if emitted:
            runtime.event_worker.wake()
        return emitted

    def _review_request(
        self, organisation_id: str, item: dict[str, Any], submit_id: str, stage: int,
        approvers: list[dict[str, Any]], missing: list[str],
    ) -> ServiceEvent:
        """The approvalEventUpdate the webhook would have brought for the missing approvers."""
        data = {"action": "submitted" if stage == 0 else "approved",
                **pending_update_data(item, submit_id, stage, approvers), "reconciled": True}
        return ServiceEvent(
            delivery_id(submit_id, stage, missing), APPROVAL_UPDATE, organisation_id,
            self.runtime.clock.now_ms(), data,
        )

    async def requested_before(
        self, organisation_id: str, submit_id: str, stage: int, approver_id: str
    ) -> bool:
        """Whether this approver was asked for this stage of this submission on every
        channel timebot serves them on."""
        request = (submit_id, stage, approver_id)
        return request not in await unrequested(self.runtime, organisation_id, [request])
