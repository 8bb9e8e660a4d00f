"""Rate-limited, durable delivery of the bot's Slack messages.

Every message the bot sends on its own initiative (DMs, updates in place, nudges, Home views)
is a `slack_outgoing` row first, then a worker makes the Web API call. Pacing follows Slack's
limits: about one message per second per channel, a workspace-wide rate for all channels
together, and on HTTP 429 the worker waits the Retry-After and tries the same call again —
nothing is dropped. Calls to one channel keep their order (a post before its update).

Scheduling uses the wall clock (Slack's limits are real time), not the business clock.
"""

from __future__ import annotations

import asyncio
import itertools
import time
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import structlog
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy import Table, bindparam, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.workspace import INSTALLATION_ERRORS, UNINSTALLED
from plumbing.clock import Clock
from plumbing.waiting import wait_for_event
from timebot.state.db import insert_for, insert_ignoring, unit_of_work
from timebot.state.models import SlackOutgoing
from timebot.state.queue import DONE, FAILED, QUEUED, WORKING, claim_rows, finish_row
from timebot.worker import PollingWorker

log = structlog.get_logger("timebot.slack.sender")

OUTGOING: Table = SlackOutgoing.__table__  # type: ignore[assignment]  # Core, for bulk statements

POST = "chat.postMessage"
UPDATE = "chat.update"
FLUSH_SECONDS = 0.25
RETRYABLE_ERRORS = {"ratelimited", "internal_error", "fatal_error", "service_unavailable",
                    "request_timeout"}
# Kept for after a reinstall (bot.workspace); the worker claims nothing while uninstalled.
HELD_ERRORS = INSTALLATION_ERRORS | {UNINSTALLED}


def wall_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class RateLimits:
    """Seconds between two messages to one channel, and messages per second overall."""

    per_channel_interval: float = 1.1  # a margin over Slack's one per second
    workspace_per_second: float = 8.0
    concurrency: int = 256


class Pacer:
    """Hands out send slots: per channel and workspace-wide; a 429 pauses everything."""

    def __init__(self, limits: RateLimits) -> None:
        self.limits = limits
        self._channel_next: dict[str, float] = {}
        # A DM posted to a user id lands in their IM channel: both are one channel.
        self.aliases: dict[str, str] = {}
        self._global_next = 0.0
        self._paused_until = 0.0

    async def slot(self, channel: str) -> None:
        """Wait until `channel` may get a message: its own pace first, then the next
        workspace-wide slot, handed out first come, first served. Each waiter sleeps until
        its own slot (a herd of waiters all waking at every slot to find it taken would cost
        more CPU than the sending). A 429 meanwhile (pause) sends it back to the queue."""
        interval = self.limits.per_channel_interval
        spacing = 1.0 / self.limits.workspace_per_second
        while True:
            key = self.aliases.get(channel, channel)
            now = time.monotonic()
            ready = max(self._paused_until, self._channel_next.get(key, 0.0))
            if ready > now:
                await asyncio.sleep(ready - now)
                continue
            start = max(now, self._global_next)
            self._global_next = start + spacing
            if start > now:
                await asyncio.sleep(start - now)
                key = self.aliases.get(channel, channel)
                now = time.monotonic()
                if max(self._paused_until, self._channel_next.get(key, 0.0)) > now:
                    continue  # paused, or its channel used (through an alias) meanwhile
            self._channel_next[key] = now + interval
            return

    def alias(self, channel: str, same_as: str) -> None:
        """`channel` (a user id) is `same_as` (their IM channel): one pace for both."""
        if self.aliases.get(channel) == same_as:
            return
        self.aliases[channel] = same_as
        if channel in self._channel_next:
            self._channel_next[same_as] = max(self._channel_next.pop(channel),
                                              self._channel_next.get(same_as, 0.0))

    def pause(self, seconds: float) -> None:
        self._paused_until = max(self._paused_until, time.monotonic() + seconds)


class SlackSender:
    """Enqueue Slack calls (durably) and the worker that makes them."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        client: AsyncWebClient,
        clock: Clock,
        limits: RateLimits | None = None,
        may_send: Callable[[], Awaitable[bool]] | None = None,
    ) -> None:
        self.sessions = sessions
        self.client = client
        self.clock = clock
        self.may_send = may_send  # False while the app is uninstalled: nothing is claimed
        self.worker = SenderWorker(self, limits or RateLimits())
        self._seq = itertools.count()

    def _next_seq(self) -> int:
        return time.time_ns() // 1000 * 1000 + next(self._seq) % 1000

    async def _insert(self, session: AsyncSession, values: dict[str, Any]) -> bool:
        conflict = ("dedupe_key",) if values.get("dedupe_key") is not None else ()
        result: Any = await session.execute(
            insert_ignoring(session, SlackOutgoing, conflict), values
        )
        return bool(result.rowcount)

    def _row(
        self, method: str, channel: str, payload: Mapping[str, Any], *, key: str | None,
        ref: str | None = None, context: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        return {
            "id": uuid.uuid4().hex[:24], "seq": self._next_seq(), "dedupe_key": key,
            "method": method, "channel": channel, "ref": ref, "payload": dict(payload),
            "context": dict(context or {}), "status": QUEUED, "attempts": 0,
            "next_attempt_ms": wall_ms(), "created_ms": self.clock.now_ms(),
        }

    async def call(
        self, method: str, channel: str, payload: Mapping[str, Any], *, key: str | None = None,
        ref: str | None = None, context: Mapping[str, Any] | None = None,
    ) -> bool:
        """Queue one Web API call; False when `key` was queued before (nothing added)."""
        async with unit_of_work(self.sessions) as session:
            added = await self._insert(
                session, self._row(method, channel, payload, key=key, ref=ref, context=context)
            )
        self.worker.wake()
        return added

    async def post(
        self, channel: str, text: str, blocks: Sequence[Mapping[str, Any]] | None = None, *,
        key: str | None, ref: str | None = None, context: Mapping[str, Any] | None = None,
        thread_ts: str | None = None,
    ) -> bool:
        payload: dict[str, Any] = {"channel": channel, "text": text}
        if blocks:
            payload["blocks"] = [dict(b) for b in blocks]
        if thread_ts:
            payload["thread_ts"] = thread_ts
        return await self.call(POST, channel, payload, key=key, ref=ref, context=context)

    async def post_many(
        self, messages: Sequence[tuple[str, str, Sequence[Mapping[str, Any]] | None, str | None]]
    ) -> int:
        """Queue many posts (channel, text, blocks, dedupe key) in one transaction, with one
        multi-row INSERT; how many were added (those whose key was queued before are not)."""
        rows: list[dict[str, Any]] = []
        for channel, text, blocks, key in messages:
            payload: dict[str, Any] = {"channel": channel, "text": text}
            if blocks:
                payload["blocks"] = [dict(b) for b in blocks]
            rows.append(self._row(POST, channel, payload, key=key))
        if not rows:
            return 0
        async with unit_of_work(self.sessions) as session:
            insert = insert_for(session)
            statement = insert(OUTGOING).on_conflict_do_nothing(
                index_elements=["dedupe_key"]).returning(OUTGOING.c.id)
            added = len((await session.execute(statement, rows)).all())
        self.worker.wake()
        return added

    async def update_row(
        self, row_id: str, text: str, blocks: Sequence[Mapping[str, Any]] | None
    ) -> bool:
        """Show `text`/`blocks` in the message of a post row: changed before it goes when not
        sent yet, else a chat.update queued after it (same channel, so in order)."""
        content: dict[str, Any] = {"text": text, "blocks": [dict(b) for b in blocks or []]}
        async with unit_of_work(self.sessions) as session:
            row = (await session.scalars(
                select(SlackOutgoing).where(SlackOutgoing.id == row_id).with_for_update()
            )).one_or_none()
            if row is None or row.status == FAILED:
                return False
            if row.status == QUEUED and row.ts is None:
                row.payload = {**row.payload, **content}
                return True
            await self._insert(
                session, self._row(UPDATE, row.channel, content, key=None,
                                   context={"target": row.id}),
            )
        self.worker.wake()
        return True

    async def posted(self, channel_id: str, ts: str) -> SlackOutgoing | None:
        """The message the bot posted at (channel, ts), if it was one of ours."""
        async with self.sessions() as session:
            return (await session.scalars(
                select(SlackOutgoing).where(
                    SlackOutgoing.channel_id == channel_id, SlackOutgoing.ts == ts
                )
            )).first()

    async def queued_with_key(self, key: str) -> SlackOutgoing | None:
        """The call queued with dedupe key `key` (whatever its state)."""
        async with self.sessions() as session:
            return (await session.scalars(
                select(SlackOutgoing).where(SlackOutgoing.dedupe_key == key)
            )).one_or_none()

    async def sent_with_ref(self, ref_prefix: str) -> list[SlackOutgoing]:
        async with self.sessions() as session:
            return list(await session.scalars(
                select(SlackOutgoing)
                .where(SlackOutgoing.method == POST, SlackOutgoing.ref.startswith(ref_prefix))
                .order_by(SlackOutgoing.seq)
            ))

    async def pending(self) -> int:
        async with self.sessions() as session:
            return int(await session.scalar(
                select(func.count()).select_from(SlackOutgoing)
                .where(SlackOutgoing.status.not_in([DONE, FAILED]))
            ) or 0)


class SenderWorker(PollingWorker):
    name = "slack-sender"

    def __init__(self, sender: SlackSender, limits: RateLimits, *, batch: int = 2000,
                 max_attempts: int = 10, lease_ms: int = 600_000) -> None:
        super().__init__(poll_seconds=1.0)
        self.sender = sender
        self.pacer = Pacer(limits)
        self.batch = batch
        self.max_attempts = max_attempts
        self.lease_ms = lease_ms
        self._outcomes: list[tuple[str, dict[str, Any]]] = []

    async def run_once(self) -> int:
        if self.sender.may_send is not None and not await self.sender.may_send():
            return 0
        rows = await claim_rows(
            self.sender.sessions, SlackOutgoing, owner=self.owner, now_ms=wall_ms(),
            lease_ms=self.lease_ms, limit=self.batch, due_column=SlackOutgoing.next_attempt_ms,
            order_column=SlackOutgoing.seq,
        )
        by_channel: dict[str, list[SlackOutgoing]] = defaultdict(list)
        for row in rows:
            by_channel[row.channel].append(row)
        gate = asyncio.Semaphore(self.pacer.limits.concurrency)

        async def drain(channel_rows: list[SlackOutgoing]) -> None:
            async with gate:
                for row in channel_rows:
                    await self._send(row)

        done = asyncio.Event()
        flusher = asyncio.create_task(self._flush_every(FLUSH_SECONDS, done))
        try:
            await asyncio.gather(*(drain(group) for group in by_channel.values()))
        finally:
            done.set()
            await flusher  # never cancelled half-way through a flush
            await self._flush()
        return len(rows)

    async def _flush_every(self, seconds: float, done: asyncio.Event) -> None:
        while not done.is_set():
            await wait_for_event(done, seconds)
            try:
                await self._flush()
            except Exception:  # kept for the next flush
                log.exception("slack_sender_flush_failed")

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
            async with unit_of_work(self.sender.sessions) as session:
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
        async with self.sender.sessions() as session:
            return await session.get(SlackOutgoing, str(row.context.get("target")))

    async def _send(self, row: SlackOutgoing) -> None:
        payload = dict(row.payload)
        if row.method == UPDATE:
            target = await self._target(row)
            if target is None or target.status == FAILED:
                await self._finish(row, status=FAILED, last_error="nothing to update")
                return
            if target.ts is None:  # its post is not sent yet: after it
                await self._finish(row, status=QUEUED, next_attempt_ms=wall_ms() + 1000)
                return
            payload["channel"], payload["ts"] = target.channel_id, target.ts
        while True:
            await self.pacer.slot(row.channel)
            try:
                answer = await self.sender.client.api_call(row.method, json=payload)
            except SlackApiError as error:
                status = error.response.status_code
                code = str(error.response.get("error") or "")
                if status == 429 or code == "ratelimited":
                    retry_after = float(error.response.headers.get("Retry-After", "1") or 1)
                    log.info("slack_rate_limited", method=row.method, retry_after=retry_after)
                    self.pacer.pause(retry_after)
                    continue
                if code in RETRYABLE_ERRORS or code in HELD_ERRORS or status >= 500:
                    await self._retry(row, f"{status} {code}")
                    return
                log.warning("slack_call_refused", method=row.method, error=code)
                await self._finish(row, status=FAILED, last_error=code or str(status))
                return
            except (OSError, TimeoutError) as error:
                await self._retry(row, str(error) or type(error).__name__)
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
        if row.attempts >= self.max_attempts:
            await self._finish(row, status=FAILED, last_error=error)
            return
        delay = min(300_000, 1000 * 2 ** row.attempts)
        await self._finish(row, status=QUEUED, next_attempt_ms=wall_ms() + delay,
                           last_error=error)

    async def _finish(self, row: SlackOutgoing, **values: Any) -> None:
        """Record the outcome: a message with a ref at once, the others with the next flush
        (within FLUSH_SECONDS: one transaction for many calls). A process that dies in
        between sends those again after the lease (at least once, never dropped)."""
        if row.ref is not None:  # its ts is looked up soon (updates, thread replies)
            await finish_row(self.sender.sessions, SlackOutgoing, row.id, self.owner,
                             lease_owner=None, **values)
            return
        self._outcomes.append((row.id, values))
