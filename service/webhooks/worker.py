"""Delivers queued webhook events: POST the raw JSON body, signed, 10 s timeout; on failure
retry after 5, 10, 15, 25 and 40 s (service clock), then give up (status `failed`).

A delivery is marked delivered only after the receiver answered 2xx; a graceful stop lets the
delivery in flight finish and be marked, and everything still pending is picked up by the next
start, so a restart loses nothing and repeats nothing that was acknowledged. Receivers may
de-duplicate on X-Svc-Delivery should a crash come between the answer and the mark.

The worker also runs the periodic sweeps registered in `periodic` (auto-submission, approval
reminders) once a minute.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from inspect import isawaitable
from typing import Any, cast

import httpx
import structlog
from sqlalchemy import Table, bindparam, delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from plumbing.clock import Clock
from plumbing.db import unit_of_work
from plumbing.waiting import wait_for_event
from service.models import (
    DELIVERY_DELIVERED,
    DELIVERY_FAILED,
    DELIVERY_PENDING,
    IntegrationWebhook,
    WebhookDelivery,
)
from service.outbound import AddressRefused, OutboundPolicy
from service.webhooks.local import LOCAL_URL, LocalDelivery, LocalReceiver
from service.webhooks.queue import RETRY_DELAYS_S, TIMEOUT_S, signature

log = structlog.get_logger("service.webhooks")

# A delivery being attempted is leased for this long (service clock); then it is due again.
LEASE_MS = 30_000
# Delivered and failed deliveries are kept this long, then purged.
KEEP_MS = 7 * 86_400_000

Periodic = Callable[[async_sessionmaker[AsyncSession], int], Awaitable[Any]]
# (delivery id, event, body, attempts, url, secret, active)
Due = tuple[str, str, str, int, str, str, bool]

# Built once: the due deliveries with their webhook's address, oldest first. A process with no
# in-process receiver leaves the in-process webhook's deliveries to one that has it.
_DUE = (
    select(WebhookDelivery.id, WebhookDelivery.event, WebhookDelivery.body,
           WebhookDelivery.attempts, IntegrationWebhook.url, IntegrationWebhook.secret,
           IntegrationWebhook.active)
    .join(IntegrationWebhook, IntegrationWebhook.id == WebhookDelivery.webhook_id)
    .where(WebhookDelivery.status == DELIVERY_PENDING,
           WebhookDelivery.next_attempt_ms <= bindparam("now"))
    .order_by(WebhookDelivery.created_ms, WebhookDelivery.id)
    .limit(200)
)
_DUE_OVER_HTTP = _DUE.where(IntegrationWebhook.url != LOCAL_URL)
# Built once, on the table (an ORM update of the entity also matched its condition against
# the session's objects): a batch handed to the in-process receiver, marked delivered.
_DELIVERIES = cast(Table, WebhookDelivery.__table__)
_DELIVERED_LOCALLY = (
    update(_DELIVERIES)
    .where(_DELIVERIES.c.id.in_(bindparam("ids", expanding=True)),
           _DELIVERIES.c.status == DELIVERY_PENDING)
    .values(status=DELIVERY_DELIVERED, delivered_ms=bindparam("now"), last_error=None,
            attempts=_DELIVERIES.c.attempts + 1)
)


class WebhookWorker:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        clock: Clock,
        poll_interval_s: float = 0.25,
        sweep_interval_s: float = 60.0,
        outbound: OutboundPolicy | None = None,
    ) -> None:
        self.sessions = sessions
        self.clock = clock
        self.poll_interval_s = poll_interval_s
        self.sweep_interval_s = sweep_interval_s
        # Webhook addresses are an administrator's choice: public addresses only, unless the
        # operator allowed a network (service/outbound.py).
        self.outbound = outbound or OutboundPolicy()
        self.periodic: list[Periodic] = [self.purge]
        self.timeout_s = TIMEOUT_S
        self._wake = asyncio.Event()
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        self._last_sweep = 0.0
        self._last_sweep_clock_ms: int | None = None
        # Set by a process that also runs the fronts: deliveries to LOCAL_URL are handed to it
        # in-process (service.webhooks.local); without it they are left to such a process.
        self.local_receiver: LocalReceiver | None = None

    async def start(self) -> None:
        self._stopping = False
        self._wake = asyncio.Event()
        self._task = asyncio.create_task(self._run(), name="webhook-worker")

    async def stop(self) -> None:
        self._stopping = True
        self._wake.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(self._task, TIMEOUT_S + 5)
            except (TimeoutError, asyncio.CancelledError):
                self._task.cancel()
                with contextlib.suppress(BaseException):
                    await self._task
            self._task = None

    def kick(self) -> None:
        """Look for due deliveries now rather than at the next poll."""
        self._wake.set()

    async def after_commit(self, items: list[Any]) -> None:
        """Executor hook: run callables queued by resolvers, then wake the worker."""
        for item in items:
            if callable(item):
                result = item()
                if isawaitable(result):
                    await result
        self.kick()

    async def _run(self) -> None:
        async with self.outbound.client(TIMEOUT_S) as client:
            while not self._stopping:
                try:
                    await self._sweep_if_due()
                    await self.deliver_due(client)
                except Exception:
                    log.exception("webhook_worker_failed")
                if self._stopping:
                    break
                await wait_for_event(self._wake, self.poll_interval_s)
                self._wake.clear()

    async def _sweep_if_due(self) -> None:
        """The sweeps run once a minute, by the wall clock or by the service clock (a test
        clock that jumps ahead runs them at the next wake-up)."""
        moment = time.monotonic()
        now_ms = self.clock.now_ms()
        last_ms = self._last_sweep_clock_ms
        interval_ms = int(self.sweep_interval_s * 1000)
        if (
            last_ms is not None
            and abs(now_ms - last_ms) < interval_ms
            and moment - self._last_sweep < self.sweep_interval_s
        ):
            return
        self._last_sweep = moment
        self._last_sweep_clock_ms = now_ms
        for job in self.periodic:
            await job(self.sessions, now_ms)

    async def deliver_due(self, client: httpx.AsyncClient) -> int:
        """Attempt every delivery that is due; returns how many were attempted."""
        now = self.clock.now_ms()
        query = _DUE if self.local_receiver is not None else _DUE_OVER_HTTP
        async with self.sessions() as session:
            due: list[Due] = [
                (str(d), str(e), str(b), int(a), str(u), str(k), bool(on))
                for d, e, b, a, u, k, on in await session.execute(query, {"now": now})
            ]
        by_webhook: dict[str, list[Due]] = {}
        local: list[Due] = []
        for item in due:
            if item[4] == LOCAL_URL:
                if item[6]:
                    local.append(item)
                continue
            by_webhook.setdefault(item[4] + "\0" + item[5], []).append(item)
        await asyncio.gather(
            *(self._deliver_group(client, g) for g in by_webhook.values()),
            *([self._deliver_local(local)] if local else []),
        )
        return len(due)

    async def _deliver_local(self, group: list[Due]) -> None:
        """Hand the batch to the in-process receiver; marked delivered once it returned."""
        receiver = self.local_receiver
        if receiver is None or self._stopping:
            return
        try:
            await receiver([LocalDelivery.of(item[0], item[2]) for item in group])
        except Exception as failure:
            log.exception("local_delivery_failed", deliveries=len(group))
            for item in group:
                await self._record(item[0], item[3] + 1, f"{type(failure).__name__}: {failure}")
            return
        now = self.clock.now_ms()
        async with unit_of_work(self.sessions) as session:
            await session.execute(_DELIVERED_LOCALLY,
                                  {"ids": [item[0] for item in group], "now": now})

    async def _deliver_group(self, client: httpx.AsyncClient, group: list[Due]) -> None:
        for delivery_id, event, body, attempts, url, secret, active in group:
            if self._stopping:
                return
            if not active or not await self._claim(delivery_id):
                continue
            error: str | None = None
            raw = body.encode()
            try:
                response = await client.post(
                    url,
                    content=raw,
                    headers={
                        "Content-Type": "application/json",
                        "User-Agent": "timebot-service-webhooks/1",
                        "X-Svc-Event": event,
                        "X-Svc-Delivery": delivery_id,
                        "X-Svc-Signature": signature(secret, raw),
                    },
                    timeout=self.timeout_s,
                )
                if not 200 <= response.status_code < 300:
                    error = f"HTTP {response.status_code}"
            except httpx.HTTPError as failure:
                error = f"{type(failure).__name__}: {failure}"
                if isinstance(failure.__cause__, AddressRefused):
                    log.warning("webhook_address_refused", delivery=delivery_id, error=error)
            await self._record(delivery_id, attempts + 1, error)

    async def _claim(self, delivery_id: str) -> bool:
        """Lease the delivery for LEASE_MS so that another worker on the same database (or this
        one after a crash) leaves it alone until then; False when someone else has it."""
        now = self.clock.now_ms()
        async with unit_of_work(self.sessions) as session:
            result = await session.execute(
                update(WebhookDelivery)
                .where(
                    WebhookDelivery.id == delivery_id,
                    WebhookDelivery.status == DELIVERY_PENDING,
                    WebhookDelivery.next_attempt_ms <= now,
                )
                .values(next_attempt_ms=now + LEASE_MS)
            )
        return bool(getattr(result, "rowcount", 0) == 1)

    async def purge(self, sessions: async_sessionmaker[AsyncSession], now_ms: int) -> None:
        """Forget deliveries delivered or given up more than KEEP_MS ago."""
        async with unit_of_work(sessions) as session:
            await session.execute(
                delete(WebhookDelivery).where(
                    WebhookDelivery.status.in_((DELIVERY_DELIVERED, DELIVERY_FAILED)),
                    WebhookDelivery.created_ms < now_ms - KEEP_MS,
                )
            )

    async def _record(self, delivery_id: str, attempts: int, error: str | None) -> None:
        now = self.clock.now_ms()
        values: dict[str, Any] = {"attempts": attempts, "last_error": error}
        if error is None:
            values.update(status=DELIVERY_DELIVERED, delivered_ms=now)
        elif attempts > len(RETRY_DELAYS_S):
            values.update(status=DELIVERY_FAILED)
            log.warning("webhook_given_up", delivery=delivery_id, error=error)
        else:
            values.update(next_attempt_ms=now + RETRY_DELAYS_S[attempts - 1] * 1000)
        async with unit_of_work(self.sessions) as session:
            await session.execute(
                update(WebhookDelivery)
                .where(WebhookDelivery.id == delivery_id,
                       WebhookDelivery.status == DELIVERY_PENDING)
                .values(**values)
            )
