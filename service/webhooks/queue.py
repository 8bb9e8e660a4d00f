"""The durable queue of webhook deliveries.

`enqueue` writes one WebhookDelivery row per subscribed, active webhook in the caller's
transaction, so an event is queued if and only if the change it reports is committed, and a
restart loses none. Body (raw JSON, signed at send time)::

    {"id": <delivery id>, "event": <event name>, "organisationId": ..., "timestamp": <ms>,
     "data": {...}}

Headers: X-Svc-Event, X-Svc-Delivery (the delivery id, for de-duplication) and
X-Svc-Signature: sha256=<hex HMAC-SHA256 of the raw body with the webhook's secret>.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import ColumnElement, Table, bindparam, func, insert, literal, select
from sqlalchemy.ext.asyncio import AsyncSession

from plumbing.db import write_rows
from plumbing.ids import new_id
from service.models import DELIVERY_PENDING, IntegrationWebhook, WebhookDelivery

EVENT_APPROVAL_UPDATE = "approvalEventUpdate"
EVENT_APPROVAL_REMINDER = "approvalReminder"
EVENT_TIMESHEET_REMINDER = "timesheetReminder"
# A Journal message was written on a timesheet (addMessage): chat threads mirror it.
EVENT_JOURNAL_MESSAGE = "journalMessage"
# Such a message was edited (editMessage) or deleted (deleteMessage): the threads follow.
EVENT_JOURNAL_MESSAGE_EDITED = "journalMessageEdited"
EVENT_JOURNAL_MESSAGE_DELETED = "journalMessageDeleted"
# A setting of the registry was edited (time settings, localisation, notification settings,
# e-mail templates; service/organisation/settings_resolvers.py): the fronts read the rules they
# keep again.
EVENT_SETTINGS_UPDATE = "settingsUpdate"
EVENTS = (EVENT_APPROVAL_UPDATE, EVENT_APPROVAL_REMINDER, EVENT_TIMESHEET_REMINDER,
          EVENT_JOURNAL_MESSAGE, EVENT_JOURNAL_MESSAGE_EDITED, EVENT_JOURNAL_MESSAGE_DELETED,
          EVENT_SETTINGS_UPDATE)
ALL_EVENTS = "*"

# Seconds to wait before retry 1..5; after the fifth retry fails the delivery is given up.
RETRY_DELAYS_S = (5, 10, 15, 25, 40)
TIMEOUT_S = 10.0

# Marker put in RequestContext.after_commit: wake the delivery worker after the commit.
KICK = "webhooks.kick"


def new_secret() -> str:
    return secrets.token_hex(32)


def signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def subscribed(active: bool, events: list[str], event: str) -> bool:
    """Whether a webhook (its `active` and `events`) is to receive the event."""
    return active and (event in events or ALL_EVENTS in events)


# Built once (they run for every approval transition): the values are parameters. Only the
# columns that decide are read, and deliveries are written at once by a Core INSERT: nothing
# reads them back as objects. No autoflush: what the caller has pending (the change being
# reported) is no webhook, and is written by the caller's own flush.
_WEBHOOKS_OF_ORG = (
    select(IntegrationWebhook.id, IntegrationWebhook.active, IntegrationWebhook.events)
    .where(IntegrationWebhook.organisation_id == bindparam("webhooks_org"))
    .execution_options(autoflush=False)
)
_INSERT_DELIVERY = insert(cast(Table, WebhookDelivery.__table__))
_HOOKS = cast(Table, IntegrationWebhook.__table__)

# A webhook as `enqueue` decides on it: (id, active, events).
Webhook = tuple[str, bool, list[str]]


def webhooks_column(org_id: ColumnElement[Any], dialect: str) -> ColumnElement[Any]:
    """The organisation's webhooks as one JSON array of [id, active, events], a column of a
    statement that reads something else (the approval's own read of its submission: a
    statement less); `webhooks_in` makes it what `enqueue` takes."""
    if dialect == "postgresql":
        found = (select(func.json_agg(func.json_build_array(
            _HOOKS.c.id, _HOOKS.c.active, _HOOKS.c.events)))
            .where(_HOOKS.c.organisation_id == org_id).scalar_subquery())
        return func.coalesce(found, literal("[]").cast(_HOOKS.c.events.type))
    return (select(func.json_group_array(func.json_array(
        _HOOKS.c.id, _HOOKS.c.active, func.json(_HOOKS.c.events))))
        .where(_HOOKS.c.organisation_id == org_id).scalar_subquery())


def webhooks_in(value: Any) -> list[Webhook]:
    """`webhooks_column`'s value (JSON text, or as the driver decoded it) as webhooks."""
    items = json.loads(value) if isinstance(value, str | bytes) else value or []
    return [(str(hook_id), bool(active), list(events or [])) for hook_id, active, events
            in items]


async def enqueue(
    session: AsyncSession, org_id: str, event: str, data: dict[str, Any], now_ms: int,
    webhooks: Sequence[Webhook] | None = None,
) -> list[str]:
    """Queue the event for every active webhook of the organisation that subscribes to it.
    `webhooks`: the organisation's, when the caller read them in this transaction."""
    return await enqueue_many(session, org_id, event, [data], now_ms, webhooks)


async def enqueue_many(
    session: AsyncSession, org_id: str, event: str, datas: Sequence[dict[str, Any]],
    now_ms: int, webhooks: Sequence[Webhook] | None = None,
) -> list[str]:
    """`enqueue` of several events of one kind, in order: the webhooks read once (unless
    given), the deliveries written by one statement."""
    if not datas:
        return []
    if webhooks is None:
        webhooks = [(hook_id, active, events) for hook_id, active, events
                    in await session.execute(_WEBHOOKS_OF_ORG, {"webhooks_org": org_id})]
    rows: list[dict[str, Any]] = []
    for webhook_id, active, events in webhooks:
        if not subscribed(active, events, event):
            continue
        for data in datas:
            delivery_id = new_id()
            body = json.dumps(
                {
                    "id": delivery_id,
                    "event": event,
                    "organisationId": org_id,
                    "timestamp": now_ms,
                    "data": data,
                },
                separators=(",", ":"),
                sort_keys=True,
            )
            rows.append({
                "id": delivery_id,
                "organisation_id": org_id,
                "webhook_id": webhook_id,
                "event": event,
                "body": body,
                "status": DELIVERY_PENDING,
                "attempts": 0,
                "next_attempt_ms": now_ms,
                "created_ms": now_ms,
                "delivered_ms": None,
                "last_error": None,
            })
    if rows:
        await write_rows(session, _INSERT_DELIVERY, rows)
    return [row["id"] for row in rows]
