"""Rate-limited, durable delivery of the bot's Slack messages.

Every message the bot sends on its own initiative (DMs, updates in place, nudges, Home views)
is a `slack_outgoing` row first, then a worker makes the Web API call. Pacing follows Slack's
limits: about one message per second per channel, a workspace-wide rate for all channels
together, and on HTTP 429 the worker waits the Retry-After and tries the same call again —
nothing is dropped. Calls to one channel keep their order (a post before its update), except
that a row failing for a reason of its own is set aside (bot/slack/sender_worker.py).

Scheduling uses the wall clock (Slack's limits are real time), not the business clock.
"""

from __future__ import annotations

import asyncio
import itertools
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import structlog
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.slack.pacing import PaceClock, RateLimits
from bot.slack.sender_worker import DELETE, OUTGOING, POST, UPDATE, SenderWorker, wall_ms
from plumbing.clock import Clock
from plumbing.prefixes import starts_with
from timebot.state.db import insert_for, insert_ignoring, unit_of_work
from timebot.state.lanes import priority_of
from timebot.state.models import SlackOutgoing
from timebot.state.queue import DONE, FAILED, QUEUED

log = structlog.get_logger("timebot.slack.sender")

WRITE_CHUNK = 100

class SlackSender:
    """Enqueue Slack calls (durably) and the worker that makes them."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        client: AsyncWebClient,
        clock: Clock,
        limits: RateLimits | None = None,
        pace_clock: PaceClock | None = None,
        may_send: Callable[[], Awaitable[bool]] | None = None,
        team_id: str | None = None,
        poll_seconds: float = 1.0,
        reads: async_sessionmaker[AsyncSession] | None = None,
    ) -> None:
        self.sessions = sessions
        self.reads = reads or sessions  # the look-ups below: beside a writer on SQLite
        # The installation whose token sends (bot.slack.installations): its rows carry its team,
        # and its worker claims those only (None: SLACK_BOT_TOKEN's workspace).
        self.team_id = team_id
        self.client = client
        self.clock = clock
        # may_send: False while the app is uninstalled (bot.slack.workspace): nothing is claimed
        self.worker = SenderWorker(sessions, client, limits or RateLimits(), clock=pace_clock,
                                   may_send=may_send, team_id=team_id,
                                   poll_seconds=poll_seconds)
        self._seq = itertools.count()

    def mine(self) -> Any:
        """This installation's rows (another workspace's messages are never its own)."""
        return (SlackOutgoing.team_id == self.team_id if self.team_id is not None
                else SlackOutgoing.team_id.is_(None))

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
        ref: str | None = None, context: Mapping[str, Any] | None = None, bulk: bool = False,
    ) -> dict[str, Any]:
        return {
            "id": uuid.uuid4().hex[:24], "seq": self._next_seq(), "dedupe_key": key,
            "method": method, "channel": channel, "priority": priority_of(bulk),
            "ref": ref, "payload": dict(payload),
            "context": dict(context or {}), "status": QUEUED, "attempts": 0,
            "next_attempt_ms": wall_ms(), "created_ms": self.clock.now_ms(),
            "team_id": self.team_id,
        }

    async def call(
        self, method: str, channel: str, payload: Mapping[str, Any], *, key: str | None = None,
        ref: str | None = None, context: Mapping[str, Any] | None = None, bulk: bool = False,
    ) -> bool:
        """Queue one Web API call; False when `key` was queued before (nothing added).
        `bulk`: one of many (a fan-out, a reminder run), sent after the calls someone who
        just acted waits for (timebot.state.lanes)."""
        async with unit_of_work(self.sessions) as session:
            added = await self._insert(
                session, self._row(method, channel, payload, key=key, ref=ref, context=context,
                                   bulk=bulk)
            )
        self.worker.wake()
        return added

    async def post(
        self, channel: str, text: str, blocks: Sequence[Mapping[str, Any]] | None = None, *,
        key: str | None, ref: str | None = None, context: Mapping[str, Any] | None = None,
        thread_ts: str | None = None, bulk: bool = False,
    ) -> bool:
        payload: dict[str, Any] = {"channel": channel, "text": text}
        if blocks:
            payload["blocks"] = [dict(b) for b in blocks]
        if thread_ts:
            payload["thread_ts"] = thread_ts
        return await self.call(POST, channel, payload, key=key, ref=ref, context=context,
                               bulk=bulk)

    async def post_many(
        self, messages: Sequence[tuple[str, str, Sequence[Mapping[str, Any]] | None, str | None]]
    ) -> int:
        """Queue many posts (channel, text, blocks, dedupe key) in the bulk lane, WRITE_CHUNK
        rows a transaction (one multi-row INSERT each: the write lock is held a few ms at a
        time, not for a whole team's reminders); how many were added (those whose key was
        queued before are not)."""
        rows: list[dict[str, Any]] = []
        for channel, text, blocks, key in messages:
            payload: dict[str, Any] = {"channel": channel, "text": text}
            if blocks:
                payload["blocks"] = [dict(b) for b in blocks]
            rows.append(self._row(POST, channel, payload, key=key, bulk=True))
        added = 0
        for start in range(0, len(rows), WRITE_CHUNK):
            if start:
                await asyncio.sleep(0)  # a writer waiting meanwhile goes first
            async with unit_of_work(self.sessions) as session:
                insert = insert_for(session)
                statement = insert(OUTGOING).on_conflict_do_nothing(
                    index_elements=["dedupe_key"]).returning(OUTGOING.c.id)
                added += len((await session.execute(
                    statement, rows[start:start + WRITE_CHUNK])).all())
        if added:
            self.worker.wake()
        return added

    async def update_row(
        self, row_id: str, text: str, blocks: Sequence[Mapping[str, Any]] | None, *,
        bulk: bool = False,
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
                                   context={"target": row.id}, bulk=bulk),
            )
        self.worker.wake()
        return True

    async def delete_row(self, row_id: str, *, bulk: bool = False) -> bool:
        """Remove the message of a post row: a chat.delete queued after it (same channel, so
        in order; a post not sent yet goes first)."""
        async with unit_of_work(self.sessions) as session:
            row = await session.get(SlackOutgoing, row_id)
            if row is None or row.status == FAILED or row.method != POST:
                return False
            await self._insert(session, self._row(DELETE, row.channel, {}, key=None,
                                                  context={"target": row.id}, bulk=bulk))
        self.worker.wake()
        return True

    async def with_key_prefix(self, prefix: str) -> list[SlackOutgoing]:
        """This installation's posts whose dedupe key starts with `prefix`."""
        async with self.reads() as session:
            return list(await session.scalars(
                select(SlackOutgoing)
                .where(SlackOutgoing.method == POST,
                       starts_with(SlackOutgoing.dedupe_key, prefix),
                       self.mine())
                .order_by(SlackOutgoing.seq)
            ))

    async def posted(self, channel_id: str, ts: str) -> SlackOutgoing | None:
        """The message the bot posted at (channel, ts), if it was one of ours."""
        async with self.reads() as session:
            return (await session.scalars(
                select(SlackOutgoing).where(
                    SlackOutgoing.channel_id == channel_id, SlackOutgoing.ts == ts,
                    self.mine(),
                )
            )).first()

    async def queued_with_key(self, key: str) -> SlackOutgoing | None:
        """The call queued with dedupe key `key` (whatever its state)."""
        async with self.reads() as session:
            return (await session.scalars(
                select(SlackOutgoing).where(SlackOutgoing.dedupe_key == key)
            )).one_or_none()

    async def sent_with_ref(self, ref_prefix: str) -> list[SlackOutgoing]:
        async with self.reads() as session:
            return list(await session.scalars(
                select(SlackOutgoing)
                .where(SlackOutgoing.method == POST, starts_with(SlackOutgoing.ref, ref_prefix),
                       self.mine())
                .order_by(SlackOutgoing.seq)
            ))

    async def pending(self) -> int:
        async with self.reads() as session:
            return int(await session.scalar(
                select(func.count()).select_from(SlackOutgoing)
                .where(SlackOutgoing.status.not_in([DONE, FAILED]))
            ) or 0)
