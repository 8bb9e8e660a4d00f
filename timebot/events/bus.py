"""Events from the service, as the bot's parts see them.

Webhook deliveries (POST /svc/webhooks) — or, against a hosted service without webhooks, the
approval-state poller — are committed to `received_events` (one row per delivery id) and then
dispatched by a worker to every subscriber: the ground's review dispatch (review requests,
by e-mail and DM), the mail half (reminders, owner notices) and the Slack half (outcomes,
threads, owner notices). A subscriber that fails makes the event be dispatched again, to
every subscriber: subscribers are idempotent (they send through the outbox with dedupe keys).
It is dispatched again after a backoff, for as long as the cause is temporary (the service
unreachable, a database error); an event that fails for a reason of its own is set aside after
a few attempts, and the events behind it are dispatched meanwhile.

A claimed batch is dispatched concurrently across organisations (at most CONCURRENCY at once)
and in received order within each: one organisation's slow or failing events hold up none of
the others' (100 workspaces' review DMs on time, #27).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Iterable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import structlog
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from plumbing.clock import Clock
from plumbing.db import unit_of_work
from plumbing.urgency import interactive, yield_to_people
from timebot.state.db import insert_ignoring
from timebot.state.lanes import BULK, INTERACTIVE
from timebot.state.models import ReceivedEvent
from timebot.state.queue import DONE, FAILED, QUEUED, WORKING, FinishBatch, Write, claim_records
from timebot.state.retry import Backoff, after_failure, is_temporary
from timebot.state.worker import PollingWorker

log = structlog.get_logger("timebot.events")

APPROVAL_UPDATE = "approvalEventUpdate"
APPROVAL_REMINDER = "approvalReminder"
TIMESHEET_REMINDER = "timesheetReminder"
SETTINGS_UPDATE = "settingsUpdate"

FLUSH_SECONDS = 0.5  # a dispatched event is marked done within about this (EventWorker)
BACKOFF = Backoff(2_000, 300_000)  # a failed event is dispatched again after 2 s, 4 s … 5 min
CLAIM_LIMIT = 40  # events claimed in one batch (EventWorker) …
PER_ORGANISATION = 20  # … of which at most this many of one organisation (the rest handed back)
CONCURRENCY = 8  # organisations dispatched at once (the database pools hold 30 connections)


Written = Callable[[], None]
# The writes of the event being dispatched by an EventWorker, made with its done mark.
_WITH_DONE: ContextVar[list[tuple[Write, Written | None]] | None] = ContextVar(
    "event_writes", default=None)


async def write_with_event(sessions: async_sessionmaker[AsyncSession], write: Write,
                           written: Written | None = None) -> bool:
    """`write` in the transaction that marks the event being dispatched done (an EventWorker's:
    one commit for the subscriber's row and the event, so no crash between them; a failed
    dispatch writes neither, and the event dispatched again makes it anew): True; else at
    once in a transaction of its own: False. `written`: called once it is committed."""
    pending = _WITH_DONE.get()
    if pending is not None:
        pending.append((write, written))
        return True
    async with unit_of_work(sessions) as session:
        await write(session)
    if written is not None:
        written()
    return False


@dataclass(frozen=True)
class ServiceEvent:
    delivery_id: str
    event: str
    organisation_id: str
    timestamp_ms: int
    data: dict[str, Any]


Subscriber = Callable[[ServiceEvent], Awaitable[None]]

BULK_ACTIONS = frozenset({"submitted", "restarted", "reminder"})
"""approvalEventUpdate's actions that ask many (a stage's approvers), not answer one."""


def event_priority(event: ServiceEvent) -> int:
    """Pure: the lane of an event (timebot.state.lanes). Bulk: reminders, and a timesheet
    submitted or restarted (its stage's review requests: the fan-out). Interactive: the rest,
    a decision above all (the cards settled for the approver who just acted, the owner's
    notice), dispatched before the bulk events received earlier. The review requests of a
    submission whose decision went first ask nobody (timebot.notify.reviews reads the state
    first)."""
    if event.event in (APPROVAL_REMINDER, TIMESHEET_REMINDER):
        return BULK
    if event.event == APPROVAL_UPDATE:
        action = event.data.get("action")
        # Without an action: what the reconciler or the approval poller found waiting (a
        # stage's approvers to ask) is bulk, an outcome they found is not.
        if action in BULK_ACTIONS or (action is None and event.data.get("status") == "s"):
            return BULK
    return INTERACTIVE


def is_interactive(event: ServiceEvent) -> bool:
    return event_priority(event) == INTERACTIVE


@dataclass
class EventBus:
    """Each subscriber registers with the event kinds it handles, and is handed only those.
    Their union is what timebot's webhooks subscribe to (`events`): a part that handles a kind
    declares it once, here, and the subscription follows (issue #40: subscribed to "*", every
    event of the service was delivered, committed and dispatched to nobody)."""

    subscribers: list[tuple[str, Subscriber, frozenset[str]]] = field(default_factory=list)
    # Called when the union of the kinds grew (a Slack installation's parts registered
    # while running): the subscriptions are brought up to date.
    on_change: list[Callable[[], None]] = field(default_factory=list)

    def subscribe(self, name: str, subscriber: Subscriber, events: Iterable[str]) -> None:
        kinds = frozenset(events)
        if not kinds:
            raise ValueError(f"subscriber {name} handles no event kind")
        before = self.events()
        self.subscribers.append((name, subscriber, kinds))
        if self.events() != before:
            for callback in self.on_change:
                callback()

    def events(self) -> list[str]:
        """The event kinds some subscriber handles, sorted."""
        return sorted(set().union(*(kinds for _, _, kinds in self.subscribers)))

    async def dispatch(self, event: ServiceEvent) -> None:
        for name, subscriber, kinds in self.subscribers:
            if event.event in kinds:
                log.debug("event_dispatch", subscriber=name, kind=event.event)
                await subscriber(event)


class EventStore:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], clock: Clock) -> None:
        self.sessions = sessions
        self.clock = clock

    async def accept(self, event: ServiceEvent) -> bool:
        """Commit the event; False when this delivery was received before."""
        return bool(await self.accept_many([event]))

    async def accept_many(self, events: list[ServiceEvent]) -> int:
        """Commit a batch of events in one transaction, in one INSERT … RETURNING (a delivery
        id received before is skipped: ON CONFLICT DO NOTHING); how many were new."""
        return len(await self.accept_new(events))

    async def accept_new(self, events: list[ServiceEvent]) -> list[str]:
        """`accept_many`, answering the delivery ids of the events that were new."""
        if not events:
            return []
        now = self.clock.now_ms()
        rows = [{
            "id": uuid.uuid4().hex[:24],
            "delivery_id": event.delivery_id,
            "event": event.event,
            "organisation_id": event.organisation_id,
            "timestamp_ms": event.timestamp_ms,
            "data": event.data,
            "received_ms": now,
            "status": QUEUED,
            "attempts": 0,
            "priority": event_priority(event),
        } for event in events]
        async with unit_of_work(self.sessions) as session:
            inserted = await session.execute(_new_events(session), rows)
            return [str(delivery) for delivery in inserted.scalars()]

    async def waiting_stages(self, organisation_id: str) -> set[tuple[str, int]]:
        """The (submission, stage) of this organisation's approval updates still to be
        dispatched (queued, or in a worker's hands) that say the timesheet waits there: their
        dispatch asks that stage's approvers (the reconciler need not feed them again)."""
        data = ReceivedEvent.data
        async with self.sessions() as session:
            rows = await session.execute(
                select(data["submitId"].as_string(), data["stage"].as_integer()).where(
                    ReceivedEvent.organisation_id == organisation_id,
                    ReceivedEvent.status.in_((QUEUED, WORKING)),
                    ReceivedEvent.event == APPROVAL_UPDATE,
                    data["status"].as_string() == "s"))
            return {(str(submit), int(stage)) for submit, stage in rows
                    if submit is not None and stage is not None}

    async def all(self) -> list[ReceivedEvent]:
        async with self.sessions() as session:
            rows = await session.scalars(select(ReceivedEvent).order_by(ReceivedEvent.received_ms))
            return list(rows)


_INSERTS: dict[str, Any] = {}


def _new_events(session: AsyncSession) -> Any:
    """INSERT INTO received_events … ON CONFLICT (delivery_id) DO NOTHING RETURNING
    delivery_id, for the session's dialect, built once: given several rows, one statement
    (SQLAlchemy's "insertmanyvalues"), which returns the delivery ids of those that went in."""
    dialect = session.get_bind().dialect.name
    statement = _INSERTS.get(dialect)
    if statement is None:
        statement = _INSERTS[dialect] = insert_ignoring(
            session, ReceivedEvent, ("delivery_id",)).returning(
                ReceivedEvent.__table__.c.delivery_id)
    return statement


class EventWorker(PollingWorker):
    name = "event-worker"

    def __init__(
        self,
        store: EventStore,
        bus: EventBus,
        *,
        lease_ms: int = 120_000,
        max_attempts: int = 8,
        poll_seconds: float = 2.0,
        claim_limit: int = CLAIM_LIMIT,
        per_organisation: int = PER_ORGANISATION,
        concurrency: int = CONCURRENCY,
    ) -> None:
        super().__init__(poll_seconds)
        self.claim_limit = claim_limit
        self.per_organisation = per_organisation
        self.concurrency = concurrency
        self.store = store
        self.bus = bus
        self.lease_ms = lease_ms
        self.max_attempts = max_attempts

    express = True  # decisions' events, claimed beside a batch of submissions' events

    async def run_once(self) -> int:
        return await self._dispatch_due(express=False)

    async def run_express(self) -> int:
        """`run_once` for the interactive events only (timebot.state.worker)."""
        return await self._dispatch_due(express=True)

    async def _dispatch_due(self, *, express: bool) -> int:
        """Dispatch what is claimable now: each organisation's events in order (interactive
        ones first, then received order), up to `concurrency` organisations at once, the
        largest share first. How each event ended is written together (`FinishBatch`: at the
        end of the batch, and as it goes on every FLUSH_SECONDS); a process that dies in
        between has those events dispatched again after the lease, as if it had died while
        dispatching them (subscribers are idempotent)."""
        rows = await claim_records(
            self.store.sessions,
            ReceivedEvent,
            owner=self.owner,
            now_ms=self.store.clock.now_ms(),
            lease_ms=self.lease_ms,
            limit=self.claim_limit,
            due_column=ReceivedEvent.next_attempt_ms,
            order_column=ReceivedEvent.received_ms,
            priority_column=ReceivedEvent.priority,
            express=express,
        )
        if not rows:
            return 0
        outcomes = FinishBatch(self.store.sessions, ReceivedEvent, self.owner, FLUSH_SECONDS)
        shares: dict[str, list[Any]] = {}
        for row in rows:  # claimed in received order
            shares.setdefault(row.organisation_id, []).append(row)
        for share in shares.values():  # one organisation's backlog does not fill the lease
            for row in share[self.per_organisation:]:
                await outcomes.add(row.id, status=QUEUED, lease_owner=None,
                                   attempts=row.attempts - 1)
        gate = asyncio.Semaphore(self.concurrency)
        try:
            async with asyncio.TaskGroup() as group:
                for share in sorted(shares.values(), key=len, reverse=True):
                    group.create_task(
                        self._dispatch_share(share[:self.per_organisation], outcomes, gate))
        except BaseExceptionGroup as failed:  # writing outcomes failed: the batch's error
            raise failed.exceptions[0] from None
        finally:  # also when cancelled (stop): what was dispatched is recorded
            await outcomes.flush()
        return len(rows)

    async def _dispatch_share(self, rows: Sequence[Any], outcomes: FinishBatch,
                              gate: asyncio.Semaphore) -> None:
        """One organisation's events, one after another (a failed one does not stop those
        behind it: it is dispatched again after its backoff)."""
        async with gate:
            for row in rows:
                event = ServiceEvent(row.delivery_id, row.event, row.organisation_id,
                                     row.timestamp_ms, dict(row.data))
                person_waits = getattr(row, "priority", INTERACTIVE) == INTERACTIVE
                if not person_waits:
                    await yield_to_people()
                writes: list[tuple[Write, Written | None]] = []
                token = _WITH_DONE.set(writes)
                try:
                    with interactive(person_waits):
                        await self.bus.dispatch(event)
                except Exception as error:
                    await outcomes.add(row.id, **self._after_failure(row, error))
                    continue
                finally:
                    _WITH_DONE.reset(token)
                await outcomes.add_with(row.id, writes, status=DONE, outcome="dispatched",
                                        lease_owner=None)

    def _after_failure(self, row: Any, error: Exception) -> dict[str, Any]:
        """A temporary cause (the service unreachable, a database error) is retried with
        growing delays for as long as it lasts; a cause of the event's own sets it aside
        (failed, the reason logged) after `max_attempts` such failures, and the events behind
        it go on meanwhile."""
        now = self.store.clock.now_ms()
        temporary = is_temporary(error)
        after = after_failure(attempts=row.attempts, failures=row.failures, temporary=temporary,
                              now_ms=now, backoff=BACKOFF, max_failures=self.max_attempts)
        reason = f"{type(error).__name__}: {error}"
        if after.status == FAILED:
            log.error("event_set_aside", delivery=row.delivery_id, kind=row.event,
                      failures=after.failures, reason=reason, exc_info=error)
        elif temporary:
            log.warning("event_dispatch_deferred", delivery=row.delivery_id, reason=reason,
                        retry_in_ms=after.next_attempt_ms - now)
        else:
            log.exception("event_dispatch_failed", delivery=row.delivery_id,
                          failures=after.failures, retry_in_ms=after.next_attempt_ms - now)
        return {"status": after.status, "outcome": f"error: {error}",
                "next_attempt_ms": after.next_attempt_ms, "failures": after.failures,
                "lease_owner": None}
