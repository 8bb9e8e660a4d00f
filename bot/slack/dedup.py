"""Each request from Slack is taken once, durably: Slack retries an event whose ack was slow
(`X-Slack-Retry-Num`, the same `event_id`), and a retry must change nothing — also after a
restart, or when it reaches another timebot process.

A global bolt middleware (it runs after the signature check, before any listener) derives a
key from the request — an event's `event_id`, a click's action id + `action_ts` + trigger, a
slash command's or view submission's `trigger_id` — and records it in `slack_received`
(INSERT … ON CONFLICT DO NOTHING): the request whose insert went in is acted on, any other
copy is not. Requests without such a key (URL verification, SSL checks) pass.

Nothing of this stands between a request and its acknowledgement but a read (which waits for
no writer): Slack gives an app 3 s, and the write lock of the bot's database may be held by a
fan-out for longer than that. A key already recorded is answered `200` with nothing done; a
new key's insert starts at once and is awaited after the ack — an event is acknowledged
first and its listeners run once the insert decided (`ClaimGate`); a command, click or
view submission goes to its listener, whose work after `ack()` waits for the insert
(`ClaimedAck`). What a listener does before its `ack()` (checking a view's input) is not
deduplicated: Slack retries events only. A process killed between the ack and the insert has
the request dropped, as before when killed between the insert and the ack; an insert that
fails (the database) lets the work go on: acknowledged, the request comes no more.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.listener.async_listener_start_handler import AsyncListenerStartHandler
from slack_bolt.middleware.async_middleware import AsyncMiddleware
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from plumbing.clock import Clock
from plumbing.db import is_busy
from timebot.errors import ServiceUnavailable
from timebot.state.db import insert_ignoring, unit_of_work
from timebot.state.models import SlackReceived

log = structlog.get_logger("timebot.slack.dedup")

KEEP_MS = 24 * 3_600_000  # Slack retries within minutes; a day is far beyond that
PRUNE_EVERY_SECONDS = 3600.0
MAX_KEY = 300
CLAIM = "timebot_request_claim"  # in an event's context: (the insert of its key, the key)


def request_key(body: dict[str, Any]) -> str | None:
    """What makes this request the same as its retry, or None (nothing to deduplicate). A key
    with characters no column of text takes (a NUL: PostgreSQL; undecodable text) is its hash
    (Socket Mode's requests do not pass bot.slack.http_events' checks)."""
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


class Duplicate(Exception):
    """A copy of a request another copy of which was acted on: its listener stops after its
    ack (bot.slack.component's error handler lets it pass without a word)."""


RETRY_AFTER_S = 5


async def on_listener_error(error: Exception, logger: logging.Logger,
                            response: BoltResponse | None) -> BoltResponse | None:
    """bolt's error handler (of its middleware and its listeners): a Duplicate is no error; a
    database that could not be had in time (a pool timeout, SQLite's lock: issue #40) before
    the request was acknowledged is answered 503 with Retry-After, not bolt's 500: busy, not
    broken (Slack retries an event, its copy then finds the request not taken); anything
    else is logged as bolt does. (`response` is None once acknowledged: nothing to answer.)"""
    if isinstance(error, Duplicate):
        return None
    if is_busy(error) or isinstance(error, ServiceUnavailable):
        log.warning("slack_busy_503", error=type(error).__name__, acknowledged=response is None)
        if response is None:
            return None
        return BoltResponse(status=503, body="", headers={"Retry-After": str(RETRY_AFTER_S)})
    logger.error("Failed to run listener function (error: %s)", error, exc_info=error)
    return None


class ClaimedAck(AsyncAck):
    """`ack()` that answers Slack at once, then returns only once the request's key is
    recorded by this copy (raises Duplicate when another copy's was)."""

    def __init__(self, claim: asyncio.Future[bool], key: str) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.claim = claim
        self.key = key

    async def __call__(self, *args: Any, **kwargs: Any) -> BoltResponse:
        response = await super().__call__(*args, **kwargs)
        await _claimed(self.claim, self.key)
        return response


class SlackDeduplication(AsyncMiddleware):
    def __init__(self, sessions: async_sessionmaker[AsyncSession], clock: Clock,
                 reads: async_sessionmaker[AsyncSession] | None = None) -> None:
        self.sessions = sessions
        self.reads = reads or sessions  # pure reads: beside a writer on SQLite
        self.clock = clock
        self._pruned = 0.0
        self._under_way: set[asyncio.Future[Any]] = set()  # kept until done

    async def seen(self, key: str) -> bool:
        """Recorded before (a retry or a duplicate): from a read, which waits for no writer.
        A read that could not be made in time (no pooled connection: issue #40) says no: the
        insert after the ack decides, as for two copies at once."""
        try:
            async with self.reads() as session:
                return await session.get(SlackReceived, key[:MAX_KEY]) is not None
        except Exception as error:
            if not is_busy(error):
                raise
            log.warning("slack_request_key_unread", key=key, error=type(error).__name__)
            return False

    async def first_time(self, key: str) -> bool:
        """Record the key; False when it was recorded before (the insert decides, also for
        two copies arriving at once). A failure to record (the database) is logged and
        counts as the first time: the request has been acknowledged, nothing else will
        bring it again."""
        now = self.clock.now_ms()
        try:
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
        except Exception:
            log.exception("slack_request_key_not_recorded", key=key)
            return True
        return taken

    def _keep(self, future: asyncio.Future[Any]) -> None:
        self._under_way.add(future)
        future.add_done_callback(self._under_way.discard)

    async def async_process(
        self, *, req: AsyncBoltRequest, resp: BoltResponse,
        next: Callable[[], Awaitable[BoltResponse]],
    ) -> BoltResponse:
        key = request_key(req.body) if isinstance(req.body, dict) else None
        if key is None:
            return await next()
        if await self.seen(key):
            retry = req.headers.get("x-slack-retry-num") or [""]
            log.info("slack_duplicate_ignored", key=key, retry=retry[0])
            return BoltResponse(status=200, body="")
        claim = asyncio.ensure_future(self.first_time(key))
        self._keep(claim)
        if req.body.get("type") == "event_callback":
            # bolt acknowledges an event itself, before its listeners: they wait in
            # `ClaimGate`, in the background.
            req.context[CLAIM] = (claim, key)
        else:
            req.context["ack"] = ClaimedAck(claim, key)
        return await next()


async def _claimed(claim: asyncio.Future[bool], key: str) -> None:
    """Return once this copy's key is recorded; Duplicate when another copy's was."""
    if not await asyncio.shield(claim):
        raise Duplicate(key)


class ClaimGate(AsyncListenerStartHandler):
    """What runs before each listener, in the background once the request is acknowledged
    (bolt's listener start handler): an event's listeners wait for its key (`CLAIM`)."""

    def __init__(self, inner: AsyncListenerStartHandler) -> None:
        self.inner = inner

    async def handle(self, request: AsyncBoltRequest, response: BoltResponse | None) -> None:
        claim = request.context.get(CLAIM)
        if claim is not None:
            await _claimed(*claim)
        await self.inner.handle(request=request, response=response)


def gate_listeners(app: AsyncApp) -> None:
    """Install `ClaimGate` and `on_listener_error` in the app (bolt has no public setting for
    the start handler)."""
    runner = app._async_listener_runner
    runner.listener_start_handler = ClaimGate(runner.listener_start_handler)
    app.error(on_listener_error)
