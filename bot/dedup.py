"""Each request from Slack is taken once, durably: Slack retries an event whose ack was slow
(`X-Slack-Retry-Num`, the same `event_id`), and a retry must change nothing — also after a
restart, or when it reaches another timebot process.

A global bolt middleware (it runs after the signature check, before any listener) derives a
key from the request — an event's `event_id`, a click's action id + `action_ts` + trigger, a
slash command's or view submission's `trigger_id` — and inserts it into `slack_received`
(INSERT … ON CONFLICT DO NOTHING). A request whose key is already there is answered `200`
with nothing done. Requests without such a key (URL verification, SSL checks) pass.

The key is recorded before the listener runs (at most once): a process killed between the
insert and its ack would have the retry ignored. The listeners ack at once, so that window
is the insert's commit; the alternative (after the work) would repeat visible effects.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from slack_bolt.middleware.async_middleware import AsyncMiddleware
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from plumbing.clock import Clock
from timebot.state.db import insert_ignoring, unit_of_work
from timebot.state.models import SlackReceived

log = structlog.get_logger("timebot.slack.dedup")

KEEP_MS = 24 * 3_600_000  # Slack retries within minutes; a day is far beyond that
PRUNE_EVERY_SECONDS = 3600.0
MAX_KEY = 300


def request_key(body: dict[str, Any]) -> str | None:
    """What makes this request the same as its retry, or None (nothing to deduplicate). A key
    with characters no column of text takes (a NUL: PostgreSQL; undecodable text) is its hash
    (Socket Mode's requests do not pass bot.http_events' checks)."""
    key = _raw_key(body)
    if key is None or key.isprintable():
        return key
    return "sha256:" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def _raw_key(body: dict[str, Any]) -> str | None:
    kind = str(body.get("type") or "")
    if kind == "event_callback":
        event_id = body.get("event_id")
        return f"event:{event_id}" if event_id else None
    if kind == "block_actions":
        actions = body.get("actions") or []
        first = actions[0] if actions and isinstance(actions[0], dict) else {}
        parts = (str(first.get("action_id") or ""), str(first.get("action_ts") or ""),
                 str(body.get("trigger_id") or ""))
        return "action:" + ":".join(parts) if any(parts) else None
    if body.get("command") and body.get("trigger_id"):
        return f"command:{body['trigger_id']}"
    trigger = body.get("trigger_id")
    if kind and trigger:  # view_submission, shortcuts, …
        return f"{kind}:{trigger}"
    return None


class SlackDeduplication(AsyncMiddleware):
    def __init__(self, sessions: async_sessionmaker[AsyncSession], clock: Clock,
                 reads: async_sessionmaker[AsyncSession] | None = None) -> None:
        self.sessions = sessions
        self.reads = reads or sessions  # pure reads: beside a writer on SQLite
        self.clock = clock
        self._pruned = 0.0

    async def first_time(self, key: str) -> bool:
        """Record the key; False when it was recorded before (a retry or a duplicate)."""
        # A retry comes when an ack was slow: a key already recorded is answered from a read,
        # without queuing for the write lock. Only a key not seen yet is inserted (the insert
        # still decides, for two copies arriving at once).
        async with self.reads() as session:
            if await session.get(SlackReceived, key[:MAX_KEY]) is not None:
                return False
        now = self.clock.now_ms()
        async with unit_of_work(self.sessions) as session:
            result: Any = await session.execute(
                insert_ignoring(session, SlackReceived, ("key",)),
                {"key": key[:MAX_KEY], "received_ms": now},
            )
            taken = bool(result.rowcount)
            if time.monotonic() - self._pruned >= PRUNE_EVERY_SECONDS:
                self._pruned = time.monotonic()
                await session.execute(
                    delete(SlackReceived).where(SlackReceived.received_ms < now - KEEP_MS))
        return taken

    async def async_process(
        self, *, req: AsyncBoltRequest, resp: BoltResponse,
        next: Callable[[], Awaitable[BoltResponse]],
    ) -> BoltResponse:
        key = request_key(req.body) if isinstance(req.body, dict) else None
        if key is not None and not await self.first_time(key):
            retry = req.headers.get("x-slack-retry-num") or [""]
            log.info("slack_duplicate_ignored", key=key, retry=retry[0])
            return BoltResponse(status=200, body="")
        return await next()
