"""POST /svc/webhooks: events from the service, signed with the secret of timebot's own
webhook on that organisation (timebot.events.subscriptions), committed once per delivery id,
then dispatched by the worker. When the embedded service runs in the same process (role all),
timebot's webhook is the in-process one: the same deliveries, handed over without HTTP
(`local_receiver`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

import structlog
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from timebot.events.bus import EventStore, ServiceEvent, is_interactive
from timebot.events.subscriptions import WEBHOOK_PATH, WebhookSubscriptions

log = structlog.get_logger("timebot.webhooks")

__all__ = ["WEBHOOK_PATH", "Delivery", "event_of", "local_receiver", "sign", "webhook_route"]


class Delivery(Protocol):
    """One in-process delivery: its id and the same JSON body an HTTP receiver gets."""

    @property
    def id(self) -> str: ...

    @property
    def payload(self) -> dict[str, Any]: ...


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def _plausible_id(value: str) -> bool:
    """An organisation id a database column can be asked for: printable (no NUL, which
    PostgreSQL refuses; no lone surrogate) and short."""
    return 0 < len(value) <= 64 and value.isprintable()


def _verified(secret: str | None, body: bytes, header: str) -> bool:
    return secret is not None and hmac.compare_digest(sign(secret, body), header)


def event_of(payload: Any, headers: Mapping[str, str]) -> ServiceEvent:
    """The event a webhook body reports (KeyError, TypeError, ValueError when it is none)."""
    return ServiceEvent(
        delivery_id=str(payload.get("id") or headers["X-Svc-Delivery"]),
        event=str(payload.get("event") or headers["X-Svc-Event"]),
        organisation_id=str(payload["organisationId"]),
        timestamp_ms=int(payload.get("timestamp") or 0),
        data=dict(payload.get("data") or {}),
    )


def local_receiver(
    store: EventStore, on_accepted: Callable[[bool], None]
) -> Callable[[Sequence[Delivery]], Awaitable[None]]:
    """What the embedded service's delivery worker hands its in-process deliveries to
    (the shell registers it): committed to the event store like a webhook delivery, with the
    same de-duplication on the delivery id, in one transaction per batch. `on_accepted` is
    told whether a new one is interactive (`event_priority`)."""

    async def receive(deliveries: Sequence[Delivery]) -> None:
        events = [event_of(delivery.payload, {"X-Svc-Delivery": delivery.id})
                  for delivery in deliveries]
        new = set(await store.accept_new(events))
        if new:
            on_accepted(any(is_interactive(event) for event in events
                            if event.delivery_id in new))

    return receive


def webhook_route(
    subscriptions: WebhookSubscriptions, store: EventStore, on_accepted: Any
) -> Route:
    async def receive(request: Request) -> Response:
        body = await request.body()
        try:
            event = event_of(json.loads(body), request.headers)
            organisation_id = event.organisation_id
        except (ValueError, KeyError, TypeError, AttributeError):
            return JSONResponse({"error": "not a webhook delivery of the service"}, 400)
        if not _plausible_id(organisation_id):  # read before the signature: looked up with it
            return JSONResponse({"error": "not a webhook delivery of the service"}, 400)
        header = request.headers.get("X-Svc-Signature", "")
        secret = await subscriptions.secret_for(organisation_id)
        # The secret is read again from the service only for an organisation we registered
        # with (it may have been rotated): an id we hold nothing of costs no request, however
        # many an unsigned sender invents. A lost registration is made again by `ensure_all`
        # within 30 s, and the service retries its delivery.
        if not _verified(secret, body, header) and not (
            secret is not None
            and _verified(await subscriptions.refreshed_secret(organisation_id), body, header)
        ):
            log.warning("webhook_signature_refused", organisation=organisation_id)
            return JSONResponse({"error": "signature does not verify"}, 401)
        new = await store.accept(event)
        if new:
            on_accepted(is_interactive(event))
        return JSONResponse({"ok": True, "duplicate": not new})

    return Route(WEBHOOK_PATH, receive, methods=["POST"])
