"""The Slack sender's worker: it claims the due rows of `slack_outgoing` (bot.slack.sender queues
them) and makes their Web API calls within Slack's limits (bot.slack.pacing).

- Each channel has its own lane: its rows in order, one call at a time. A call that hangs
  holds its own channel only, for at most `RateLimits.call_timeout`; rows claimed meanwhile
  join their channel's lane or start their own.
- Interactive rows (an answer to someone who just acted: timebot.state.lanes) are claimed
  before bulk ones (review DMs, nudges, reminders), also while the worker's hands are full of
  bulk rows, and go in lanes of their own: they wait for no bulk lane, and at most for one
  bulk call at the workspace's pace (`Pacer.slot`). Bulk lanes send a few at a time
  (`bulk_at_once`), which keeps the workspace's pace.
- 429: the Retry-After is waited out (everyone pauses) and the same call is made again.
- A row that fails for a reason of its own is set aside so that the rows behind it go on:
  temporary failures (5xx, Slack's internal errors, a timeout, a connection lost, an answer
  that is not Slack's) are retried with a growing delay, and after `max_attempts` the row is
  `failed` with the reason logged; Slack's refusals of the call itself (`channel_not_found`,
  `invalid_blocks`, `msg_too_long` …) fail the row at once, logged.
- A row that waited in its lane until its lease nearly ran out is given back, not sent: the
  lease is what keeps another process from sending it too.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy import Table, and_, bindparam, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.slack.pacing import PaceClock, Pacer, RateLimits, bulk_at_once
from bot.slack.workspace import INSTALLATION_ERRORS, UNINSTALLED
from plumbing.urgency import yield_to_people
from timebot.state.db import unit_of_work
from timebot.state.lanes import BULK, INTERACTIVE
from timebot.state.models import SlackOutgoing
from timebot.state.queue import DONE, FAILED, QUEUED, WORKING, claim_rows, finish_row
from timebot.state.worker import PollingWorker

log = structlog.get_logger("timebot.slack.sender")

OUTGOING: Table = SlackOutgoing.__table__  # type: ignore[assignment]  # Core, for bulk statements

POST = "chat.postMessage"
UPDATE = "chat.update"
DELETE = "chat.delete"
FLUSH_SECONDS = 0.25
RETRYABLE_ERRORS = {"ratelimited", "internal_error", "fatal_error", "service_unavailable",
                    "request_timeout"}
# Kept for after a reinstall (bot.slack.workspace); the worker claims nothing while uninstalled.
HELD_ERRORS = INSTALLATION_ERRORS | {UNINSTALLED}


def wall_ms() -> int:
    return int(time.time() * 1000)


async def due_teams(sessions: async_sessionmaker[AsyncSession]) -> list[str]:
    """The installations (teams) with rows to send now: queued and due, or under a lease
    that ran out."""
    now = wall_ms()
    async with sessions() as session:
        return [str(team) for team in await session.scalars(
            select(OUTGOING.c.team_id).distinct().where(
                OUTGOING.c.team_id.is_not(None),
                or_(and_(OUTGOING.c.status == QUEUED, OUTGOING.c.next_attempt_ms <= now),
                    and_(OUTGOING.c.status == WORKING, OUTGOING.c.lease_until_ms < now))))]



class SenderWorker(PollingWorker):
    """Claims due rows and sends them, each channel in its own lane: a lane takes its rows in
    order, one call at a time, while the other lanes go on — a call that hangs holds its own
    channel only (up to `call_timeout`), and rows claimed later join their channel's lane or
    start a new one without waiting for the earlier rows to be done."""

    name = "slack-sender"

    def __init__(self, sessions: async_sessionmaker[AsyncSession], client: AsyncWebClient,
                 limits: RateLimits, *, batch: int = 2000, max_attempts: int = 10,
                 lease_ms: int = 600_000, clock: PaceClock | None = None,
                 may_send: Callable[[], Awaitable[bool]] | None = None,
                 team_id: str | None = None, poll_seconds: float = 1.0) -> None:
        # An installation's worker (bot.slack.installations) polls seldom: one query for every
        # installation (`due_teams`) wakes those with rows due.
        super().__init__(poll_seconds=poll_seconds)
        # Only the rows of this installation (its token sends them): bot.slack.installations.
        self.mine = (OUTGOING.c.team_id == team_id if team_id is not None
                     else OUTGOING.c.team_id.is_(None))
        self.mine_interactive = and_(self.mine, OUTGOING.c.priority == INTERACTIVE)
        self.sessions = sessions
        self.may_send = may_send  # False while the app is uninstalled: nothing is claimed
        self.client = client
        self.pacer = Pacer(limits, clock)
        self.batch = batch
        self.max_attempts = max_attempts
        self.lease_ms = lease_ms
        self._outcomes: list[tuple[str, dict[str, Any]]] = []
        self._lanes: dict[tuple[str, bool], deque[SlackOutgoing]] = {}
        self._lane_tasks: set[asyncio.Task[None]] = set()
        self._in_hand = 0  # rows claimed and not finished yet
        self._gate = asyncio.Semaphore(limits.concurrency)
        self._bulk_gate = asyncio.Semaphore(bulk_at_once(limits))
        self._outcome_added = asyncio.Event()
        self._flusher: asyncio.Task[None] | None = None

    async def run_once(self) -> int:
        if self.may_send is not None and not await self.may_send():
            return 0
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush_when_needed())
        room = self.batch - self._in_hand
        if self._in_hand and room < self.batch // 2:
            # Claimed again once half is done (a claim per batch, not per row); what a
            # person waits for meanwhile, at once.
            rows = await claim_rows(
                self.sessions, SlackOutgoing, owner=self.owner, now_ms=wall_ms(),
                lease_ms=self.lease_ms, limit=self.batch // 2,
                due_column=SlackOutgoing.next_attempt_ms, order_column=SlackOutgoing.seq,
                where=self.mine_interactive,
            )
        else:
            rows = await claim_rows(
                self.sessions, SlackOutgoing, owner=self.owner, now_ms=wall_ms(),
                lease_ms=self.lease_ms, limit=room, due_column=SlackOutgoing.next_attempt_ms,
                order_column=SlackOutgoing.seq, priority_column=SlackOutgoing.priority,
                where=self.mine,
            )
        self._in_hand += len(rows)
        for row in rows:  # no await in this loop: a lane cannot end half-way through it
            key = (row.channel, row.priority == BULK)
            lane = self._lanes.get(key)
            if lane is None:
                lane = self._lanes[key] = deque()
                task = asyncio.create_task(self._drain(key, lane))
                self._lane_tasks.add(task)
                task.add_done_callback(self._lane_tasks.discard)
            lane.append(row)
        return len(rows)

    async def _drain(self, key: tuple[str, bool], lane: deque[SlackOutgoing]) -> None:
        bulk = key[1]
        async with self._bulk_gate if bulk else self._gate:
            while lane:
                if bulk:
                    await yield_to_people()
                row = lane.popleft()
                try:
                    await self._send(row, bulk)
                except Exception:  # the database, say: the row is retried after its lease
                    log.exception("slack_sender_row_failed", row=row.id, method=row.method)
                finally:
                    self._in_hand -= 1
            del self._lanes[key]  # checked empty with no await since: nothing joins it
        if self._in_hand <= self.batch // 2:
            self.wake()  # rows left unclaimed for want of room may be taken now

    async def stop(self) -> None:
        """Claim nothing more; rows claimed and not tried go back to the queue at once (no
        attempt counted), the outcomes so far are written."""
        await super().stop()
        tasks = list(self._lane_tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for lane in self._lanes.values():
            self._outcomes += [(row.id, self._given_back(row)) for row in lane]
        self._lanes.clear()
        self._in_hand = 0
        flusher, self._flusher = self._flusher, None
        if flusher is not None:
            flusher.cancel()
            await asyncio.gather(flusher, return_exceptions=True)
        try:
            await self._flush()
        except Exception:  # the rows are taken over after their lease
            log.exception("slack_sender_flush_failed")

    @staticmethod
    def _given_back(row: SlackOutgoing) -> dict[str, Any]:
        return {"status": QUEUED, "next_attempt_ms": wall_ms(),
                "attempts": max(0, row.attempts - 1)}

    async def _flush_when_needed(self) -> None:
        """Write the outcomes gathered over FLUSH_SECONDS in one transaction, while rows are
        being sent; asleep otherwise."""
        while True:
            await self._outcome_added.wait()
            await asyncio.sleep(FLUSH_SECONDS)
            self._outcome_added.clear()
            try:
                await self._flush()
            except Exception:  # kept for the next flush
                log.exception("slack_sender_flush_failed")
                self._outcome_added.set()

    async def _flush(self) -> None:
        """Write the outcomes of the calls made since the last flush, in one transaction."""
        if not self._outcomes:
            return
        outcomes, self._outcomes = self._outcomes, []
        # One executemany per shape of outcome (which columns it sets), not a statement each.
        shapes: dict[tuple[str, ...], list[dict[str, Any]]] = defaultdict(list)
        for row_id, values in outcomes:
            shapes[tuple(sorted(values))].append(
                {"row_id": row_id, **{f"new_{name}": value for name, value in values.items()}})
        try:
            async with unit_of_work(self.sessions) as session:
                for names, parameters in shapes.items():
                    await session.execute(
                        update(OUTGOING)
                        .where(OUTGOING.c.id == bindparam("row_id"),
                               OUTGOING.c.lease_owner == self.owner,
                               OUTGOING.c.status == WORKING)
                        .values(lease_owner=None,
                                **{name: bindparam(f"new_{name}") for name in names}),
                        parameters,
                    )
        except BaseException:
            self._outcomes[:0] = outcomes
            raise

    async def _target(self, row: SlackOutgoing) -> SlackOutgoing | None:
        async with self.sessions() as session:
            return await session.get(SlackOutgoing, str(row.context.get("target")))

    async def _send(self, row: SlackOutgoing, bulk: bool) -> None:
        limits = self.pacer.limits
        if (row.lease_until_ms or 0) < wall_ms() + 1000 * (limits.call_timeout + 5):
            # Waited in its lane until its lease nearly ran out: another process may take it
            # over; given back rather than sent twice.
            await self._finish(row, **self._given_back(row))
            return
        payload = dict(row.payload)
        if row.method in (UPDATE, DELETE):  # of a post of ours: once it is sent
            target = await self._target(row)
            if target is None or target.status == FAILED:
                await self._finish(row, status=FAILED, last_error="nothing to update")
                return
            if target.ts is None:  # its post is not sent yet: after it
                await self._finish(row, status=QUEUED, next_attempt_ms=wall_ms() + 1000)
                return
            payload["channel"], payload["ts"] = target.channel_id, target.ts
        while True:
            await self.pacer.slot(row.channel, bulk=bulk)
            try:
                async with asyncio.timeout(limits.call_timeout):
                    answer = await self.client.api_call(row.method, json=payload)
            except SlackApiError as error:
                status = error.response.status_code
                code = str(error.response.get("error") or "") if isinstance(
                    error.response.data, dict) else ""
                if status == 429 or code == "ratelimited":
                    retry_after = _seconds(error.response.headers.get("Retry-After"))
                    log.info("slack_rate_limited", method=row.method, retry_after=retry_after)
                    self.pacer.pause(retry_after)
                    continue
                if code in RETRYABLE_ERRORS or code in HELD_ERRORS or status >= 500 or not code:
                    # Slack's trouble, or an answer that is not Slack's (no error code).
                    await self._retry(row, f"{status} {code}".strip())
                    return
                # Slack refused this call for a reason of its own (channel_not_found,
                # invalid_blocks, msg_too_long …): the same call would fail again.
                log.warning("slack_call_refused", method=row.method, channel=row.channel,
                            row=row.id, error=code or status)
                await self._finish(row, status=FAILED, last_error=code or str(status))
                return
            except Exception as error:  # a timeout, a connection, an answer that is no JSON …
                await self._retry(row, f"{type(error).__name__}: {error}"[:300])
                return
            break
        values: dict[str, Any] = {"status": DONE, "sent_ms": wall_ms(), "last_error": None}
        if row.method == POST:
            if answer.get("channel") and answer.get("channel") != row.channel:
                self.pacer.alias(row.channel, str(answer.get("channel")))
            values["channel_id"] = answer.get("channel")
            values["ts"] = answer.get("ts")
        await self._finish(row, **values)

    async def _retry(self, row: SlackOutgoing, error: str) -> None:
        """A temporary failure: the row waits (1 s, 2 s, 4 s … 5 min) while the rows behind
        it go on; after `max_attempts` it is set aside for good, with the reason."""
        if row.attempts >= self.max_attempts:
            log.warning("slack_call_given_up", method=row.method, channel=row.channel,
                        row=row.id, attempts=row.attempts, error=error)
            await self._finish(row, status=FAILED, last_error=error)
            return
        delay = min(300_000, 1000 * 2 ** max(0, row.attempts - 1))
        log.info("slack_call_retried", method=row.method, channel=row.channel, row=row.id,
                 attempts=row.attempts, in_ms=delay, error=error)
        await self._finish(row, status=QUEUED, next_attempt_ms=wall_ms() + delay,
                           last_error=error)

    async def _finish(self, row: SlackOutgoing, **values: Any) -> None:
        """Record the outcome: a message with a ref at once, the others with the next flush
        (within FLUSH_SECONDS: one transaction for many calls). A process that dies in
        between sends those again after the lease (at least once, never dropped)."""
        if row.ref is not None:  # its ts is looked up soon (updates, thread replies)
            await finish_row(self.sessions, SlackOutgoing, row.id, self.owner,
                             lease_owner=None, **values)
            return
        self._outcomes.append((row.id, values))
        self._outcome_added.set()


def _seconds(header: str | None) -> float:
    """Retry-After (whole seconds; 1 when absent or unreadable)."""
    try:
        return max(0.0, min(float(header or 1), 600.0))
    except ValueError:
        return 1.0
