"""In-process webhook deliveries, for a process that runs the embedded service and the fronts
together (`timebot serve`, role all).

The fronts subscribe to an organisation's events with a webhook like any other, whose URL is
LOCAL_URL: the service queues its deliveries in the same transaction as the change (as for
every webhook: durable, retried), and the delivery worker hands them, in batches, to the
receiver the process registered (`WebhookWorker.local_receiver`) instead of POSTing each one
over loopback HTTP. A batch is marked delivered only after the receiver returned; the receiver
de-duplicates on the delivery id, so a crash in between repeats nothing. A process without a
receiver (a service-only process on the same database) leaves these deliveries alone.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from plumbing.db import insert_ignoring, unit_of_work
from service.models import IntegrationWebhook
from service.webhooks.queue import ALL_EVENTS, new_secret

LOCAL_URL = "inprocess:timebot"
LOCAL_NAME = "timebot"


@dataclass(frozen=True)
class LocalDelivery:
    """One queued delivery, as its webhook body says it (the same JSON an HTTP receiver
    gets)."""

    id: str
    payload: dict[str, Any]

    @classmethod
    def of(cls, delivery_id: str, body: str) -> LocalDelivery:
        return cls(delivery_id, json.loads(body))


LocalReceiver = Callable[[list[LocalDelivery]], Awaitable[None]]


def local_webhook_id(organisation_id: str) -> str:
    """One in-process webhook per organisation, whoever registers it first (two processes
    registering at once make one row)."""
    return hashlib.sha256(f"{LOCAL_URL}:{organisation_id}".encode()).hexdigest()[:24]


async def ensure_local_webhook(
    sessions: async_sessionmaker[AsyncSession], organisation_id: str, now_ms: int,
    events: Sequence[str] | None = None,
) -> tuple[str, str]:
    """The organisation's in-process webhook, registered if missing: (its id, its secret).
    `events`: what it subscribes to, set on it if it subscribed to other events (a webhook
    registered with "*" before, issue #40); None: "*" for a new one, an existing one's kept (a
    process that runs none of the fronts' consumers does not know what they handle)."""
    webhook_id = local_webhook_id(organisation_id)
    wanted = sorted(events) if events is not None else None
    async with unit_of_work(sessions) as session:
        found = (await session.execute(_LOCAL_WEBHOOK, {"webhook": webhook_id})).first()
        if found is None:
            await session.execute(insert_ignoring(session, IntegrationWebhook, ("id",)), {
                "id": webhook_id, "organisation_id": organisation_id, "name": LOCAL_NAME,
                "url": LOCAL_URL, "secret": new_secret(),
                "events": wanted if wanted is not None else [ALL_EVENTS], "active": True,
                "created_ms": now_ms,
            })
            found = (await session.execute(_LOCAL_WEBHOOK, {"webhook": webhook_id})).one()
        secret, subscribed = found
        if wanted is not None and sorted(subscribed or []) != wanted:
            await session.execute(
                update(IntegrationWebhook).where(IntegrationWebhook.id == webhook_id)
                .values(events=wanted))
    return webhook_id, str(secret)


_LOCAL_WEBHOOK = select(IntegrationWebhook.secret, IntegrationWebhook.events).where(
    IntegrationWebhook.id == bindparam("webhook"))
