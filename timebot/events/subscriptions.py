"""timebot's own webhook on each organisation it serves: registered with the organisation's
integration key, its secret (issued by the service) kept encrypted. When the embedded service
runs in the same process (role all), it is the in-process one (`InProcessWebhooks`, wired by
the shell). timebot.events.webhooks receives what it delivers.

It subscribes to the events timebot's consumers handle (`EventBus.events`: each bus subscriber
declares its kinds), not "*" (issue #40: every event of the service was delivered, committed
and dispatched to nobody); a webhook subscribed to other events (an older timebot's "*", a
part added) is set to these once per process start, and again when a part registers new
kinds. A process that runs none of the consumers (the CLI) subscribes a new webhook to "*",
which the server's loop then narrows. Whoever subscribes (the running server's loop, or
`timebot service init` beside it) calls the `on_subscribed` callbacks: the reconciler then
sends what the webhooks did not bring. When an admin rotates the secret, the first delivery
that fails to verify makes timebot read the current secret again (at most once a minute per
organisation).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import structlog
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from plumbing.clock import Clock
from plumbing.db import once_more_on_conflict, unit_of_work
from timebot.client import ServiceClient, operation
from timebot.directory.people import PeopleDirectory
from timebot.errors import NotLinked, ServiceRequestError
from timebot.secret_key.crypto import SecretBox
from timebot.state.lease import acquire_lease, new_owner, release_lease
from timebot.state.models import WebhookRegistration

log = structlog.get_logger("timebot.webhooks")

WEBHOOK_PATH = "/svc/webhooks"
WEBHOOK_NAME = "timebot"
REFRESH_INTERVAL_MS = 60_000
REFRESHES_A_MINUTE = 1_000  # organisations whose secret is read again within a minute, at most
SUBSCRIBE_LEASE_MS = 30_000
SUBSCRIBE_WAIT_SECONDS = 35.0
ALL_EVENTS = "*"  # what a process that runs none of the consumers subscribes a new webhook to

OUR_WEBHOOKS = operation(
    """query OurWebhooks {
      currentOrganisation { id integrations { webhooks { id url secret events active } } }
    }"""
)
SUBSCRIBE = operation(
    """mutation Subscribe($name: String!, $url: String!, $events: [String]!) {
      addIntegrationWebhook(name: $name, url: $url, events: $events) {
        integrations { webhooks { id url secret active } }
      }
    }"""
)
SUBSCRIBE_TO = operation(
    """mutation SubscribeTo($id: SvcId!, $events: [String]!) {
      editIntegrationWebhookEvents(id: $id, events: $events) { id }
    }"""
)
UNSUBSCRIBE = operation(
    """mutation Unsubscribe($id: SvcId!) { deleteIntegrationWebhook(id: $id) { id } }"""
)


class InProcessWebhooks(Protocol):
    """The embedded service's in-process webhook, when the service runs in this process (the
    shell adapts service.webhooks.local): a subscription is a row, a delivery a call."""

    @property
    def url(self) -> str: ...

    async def ensure(self, organisation_id: str, now_ms: int,
                     events: Sequence[str] | None) -> tuple[str, str]:
        """The organisation's in-process webhook, registered if missing, subscribed to
        `events` (None: "*" if new, else as it is): (its id, its secret)."""
        ...


class WebhookSubscriptions:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        client: ServiceClient,
        box: SecretBox,
        directory: PeopleDirectory,
        public_url: str,
        clock: Clock,
        in_process: InProcessWebhooks | None = None,
        *,
        events: Callable[[], Sequence[str]] = tuple,
    ) -> None:
        self.sessions = sessions
        self.client = client
        self.box = box
        self.directory = directory
        # The service and the fronts in one process: the subscription is the in-process
        # webhook (no GraphQL, no HTTP delivery).
        self.in_process = in_process
        self.url = in_process.url if in_process is not None else (
            public_url.rstrip("/") + WEBHOOK_PATH
        )
        self.clock = clock
        # The event kinds the process's consumers handle: the bus's, set by the server once
        # its parts are installed (shell.app); none known (the CLI): "*" for a new webhook.
        self.events = events
        # Per organisation, the events this process set its webhook to (or found it set to).
        self._synced: dict[str, tuple[str, ...]] = {}
        self._refreshed_ms: dict[str, int] = {}
        self.refresh_tracked = REFRESHES_A_MINUTE
        # Called with the organisation id when a registration was made or renewed.
        self.on_subscribed: list[Callable[[str], None]] = []

    def wanted(self) -> tuple[str, ...] | None:
        """The events to subscribe to; None when this process runs no consumer of them."""
        return tuple(sorted(self.events())) or None

    def _events_to_create(self) -> list[str]:
        wanted = self.wanted()
        return list(wanted) if wanted is not None else [ALL_EVENTS]

    async def ensure(self, organisation_id: str, *, refresh: bool = False) -> str:
        """Our webhook on that organisation exists, subscribed to what the consumers handle;
        returns its secret."""
        if not refresh:
            secret = await self.secret_for(organisation_id)
            if secret is not None:
                return secret
        if self.in_process is not None:
            wanted = self.wanted()
            webhook_id, secret = await self.in_process.ensure(
                organisation_id, self.clock.now_ms(), wanted
            )
            self._note_synced(organisation_id, wanted)
            await self._store(organisation_id, webhook_id, secret)
            for callback in self.on_subscribed:
                callback(organisation_id)
            return secret
        # Two processes may subscribe one organisation at once (`timebot orgs add` beside a
        # running server's loop): a lease per organisation lets one list-then-create at a
        # time; the other then finds the registration it stored.
        owner = new_owner()
        lease = f"webhook-subscribe:{organisation_id}"
        taken = await self._wait_for_lease(lease, owner)
        try:
            if taken and not refresh:
                secret = await self.secret_for(organisation_id)
                if secret is not None:
                    return secret
            secret = await self._subscribe(organisation_id)
        finally:
            if taken:
                await release_lease(self.sessions, lease, owner)
        for callback in self.on_subscribed:
            callback(organisation_id)
        return secret

    async def sync_events(self, organisation_id: str) -> None:
        """The organisation's registered webhook set to the events the consumers handle, if it
        subscribes to others (an older timebot's "*", a part registered since): the same
        edit whoever makes it, so two processes at once do no harm; no webhook is created
        unless ours is gone from the service (then as `ensure` does, under its lease)."""
        wanted = self.wanted()
        if wanted is None:
            return
        if self.in_process is not None:
            await self.in_process.ensure(organisation_id, self.clock.now_ms(), wanted)
            self._note_synced(organisation_id, wanted)
            return
        key, webhooks = await self._our_webhooks(organisation_id)
        if not webhooks:
            await self.ensure(organisation_id, refresh=True)
            return
        for hook in webhooks:
            await self._subscribe_to(organisation_id, hook, wanted, key)
        self._note_synced(organisation_id, wanted)

    def _note_synced(self, organisation_id: str, wanted: tuple[str, ...] | None) -> None:
        if wanted is not None:
            self._synced[organisation_id] = wanted

    async def _subscribe_to(self, organisation_id: str, hook: Mapping[str, Any],
                            wanted: tuple[str, ...], key: str) -> None:
        if tuple(sorted(hook.get("events") or [])) == wanted:
            return
        await self.client.execute(SUBSCRIBE_TO, {"id": hook["id"], "events": list(wanted)},
                                  apikey=key)
        log.info("webhook_events_set", organisation=organisation_id, webhook=hook["id"],
                 events=list(wanted), were=hook.get("events"))

    async def _wait_for_lease(self, lease: str, owner: str) -> bool:
        """The per-organisation subscription lease, waited for up to SUBSCRIBE_WAIT_SECONDS
        (a holder that died keeps it only until it expires); False when it stayed taken,
        and the caller subscribes anyway (duplicates are then removed)."""
        deadline = time.monotonic() + SUBSCRIBE_WAIT_SECONDS
        while True:
            if await acquire_lease(self.sessions, self.clock, lease, owner, SUBSCRIBE_LEASE_MS):
                return True
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.05)

    async def _our_webhooks(self, organisation_id: str) -> tuple[str, list[dict[str, Any]]]:
        """The organisation's key, and our webhooks on it (the smallest id first)."""
        key = await self.directory.integration_key(organisation_id)
        data = await self.client.execute(OUR_WEBHOOKS, apikey=key)
        if str(data["currentOrganisation"]["id"]) != organisation_id:
            # Not a key of that organisation (one no longer registered falls back to
            # TIMEBOT_INTEGRATION_KEY's): never store another organisation's secret for it.
            raise NotLinked(f"timebot holds no integration key of organisation "
                            f"{organisation_id}")
        return key, self._ours(data["currentOrganisation"]["integrations"]["webhooks"])

    def _ours(self, webhooks: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
        return sorted((hook for hook in webhooks or [] if hook["url"] == self.url),
                      key=lambda hook: str(hook["id"]))

    async def _subscribe(self, organisation_id: str) -> str:
        key, ours = await self._our_webhooks(organisation_id)
        wanted = self.wanted()
        if not ours:
            created = await self.client.execute(SUBSCRIBE, {
                "name": WEBHOOK_NAME, "url": self.url, "events": self._events_to_create(),
            }, apikey=key)
            ours = self._ours(created["addIntegrationWebhook"]["integrations"]["webhooks"])
            log.info("webhook_subscribed", organisation=organisation_id, url=self.url,
                     events=self._events_to_create())
        elif wanted is not None:
            await self._subscribe_to(organisation_id, ours[0], wanted, key)
        self._note_synced(organisation_id, wanted)
        # Keep one, the same one whoever looks (the smallest id): any other of ours (a race
        # without the lease, an older timebot) would deliver every event twice.
        for extra in ours[1:]:
            try:
                await self.client.execute(UNSUBSCRIBE, {"id": extra["id"]}, apikey=key)
            except ServiceRequestError as error:  # already removed by whoever raced us
                log.warning("webhook_duplicate_not_removed", organisation=organisation_id,
                            webhook=extra["id"], error=str(error))
        await self._store(organisation_id, ours[0]["id"], ours[0]["secret"])
        return str(ours[0]["secret"])

    async def ensure_all(self) -> int:
        """Subscribe to every organisation timebot serves; returns how many are subscribed.
        One read of the registrations for all of them (run every 30 s: with 100
        organisations, a read each queued 100 transactions for SQLite's write lock ahead of
        the Slack acks, #27); only those without one are subscribed, and those whose events
        this process has not set yet (once after start, once after a part registered new
        kinds) are set."""
        async with self.sessions() as session:
            registered = set(await session.scalars(select(WebhookRegistration.organisation_id)))
        count = 0
        wanted = self.wanted()
        for organisation_id in await self.directory.organisation_ids():
            if organisation_id not in registered:
                await self.ensure(organisation_id)
            elif wanted is not None and self._synced.get(organisation_id) != wanted:
                await self.sync_events(organisation_id)
            count += 1
        return count

    async def secret_for(self, organisation_id: str) -> str | None:
        async with self.sessions() as session:
            row = await session.get(WebhookRegistration, organisation_id)
            return None if row is None else self.box.open(row.secret_sealed)

    async def refreshed_secret(self, organisation_id: str) -> str | None:
        """The current secret read again from the service, at most once a minute."""
        now = self.clock.now_ms()
        if now - self._refreshed_ms.get(organisation_id, 0) < REFRESH_INTERVAL_MS:
            return None
        if len(self._refreshed_ms) >= self.refresh_tracked:  # unsigned deliveries name any id
            self._refreshed_ms = {org: at for org, at in self._refreshed_ms.items()
                                  if now - at < REFRESH_INTERVAL_MS}
            if len(self._refreshed_ms) >= self.refresh_tracked:
                return None  # this minute's refreshes are spent
        self._refreshed_ms[organisation_id] = now
        try:
            return await self.ensure(organisation_id, refresh=True)
        except Exception:  # the service is unreachable: the delivery will be retried
            log.exception("webhook_secret_refresh_failed", organisation=organisation_id)
            return None

    async def _store(self, organisation_id: str, webhook_id: str, secret: str) -> None:
        # Two subscriptions of one organisation may race (startup's ensure_all beside a
        # first delivery, two processes): the one that loses the insert updates the row.
        async def store() -> None:
            async with unit_of_work(self.sessions) as session:
                row = await session.get(WebhookRegistration, organisation_id)
                if row is None:
                    row = WebhookRegistration(
                        organisation_id=organisation_id, created_ms=self.clock.now_ms()
                    )
                    session.add(row)
                row.webhook_id = webhook_id
                row.url = self.url
                row.secret_sealed = self.box.seal(secret)

        await once_more_on_conflict(store)

    async def unsubscribe(self, organisation_id: str) -> None:
        """Our webhook on that organisation deleted (with its key, while it is still held)
        and its secret forgotten: no delivery of it verifies any more."""
        key = await self.directory.integration_key(organisation_id)
        data = await self.client.execute(OUR_WEBHOOKS, apikey=key)
        if str(data["currentOrganisation"]["id"]) == organisation_id:
            for hook in data["currentOrganisation"]["integrations"]["webhooks"] or []:
                if hook["url"] == self.url:
                    await self.client.execute(UNSUBSCRIBE, {"id": hook["id"]}, apikey=key)
        async with unit_of_work(self.sessions) as session:
            row = await session.get(WebhookRegistration, organisation_id)
            if row is not None:
                await session.delete(row)
        log.info("webhook_unsubscribed", organisation=organisation_id)

    async def registrations(self) -> list[WebhookRegistration]:
        async with self.sessions() as session:
            return list(await session.scalars(select(WebhookRegistration)))
