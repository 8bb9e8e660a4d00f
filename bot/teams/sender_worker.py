"""The Teams sender's worker: it claims the due rows of `teams_outgoing` (bot.teams.outgoing
queues them) and makes their Bot Connector calls.

- Interactive rows (an answer to someone who just acted: timebot.state.lanes) are claimed
  before bulk ones (review cards, nudges, digests); a claim keeps a place for bulk rows.
- Each conversation is a lane: its rows in order (a card before its update), one call at a
  time; lanes go side by side, at most `at_once` calls in all.
- Nothing goes into a tenant that does not serve the row's organisation any more (read when
  the batch is sent, not when it was queued): the row fails, logged, and nothing is called.
- 429: everyone pauses for the Retry-After (1 s when none is said) and the row is tried again.
- 403 / 404 on a send: the user removed the bot (or their account is gone): the user is marked
  removed (nothing more is queued for them, bot.teams.tenants) and their rows fail at once —
  nothing waits forever, nothing behind them waits.
- Other failures: temporary ones (5xx, unreachable, a token refused) are retried with growing
  delays; the row's own (400, an activity the connector refuses) a few times, then it fails
  with its reason (timebot.state.retry)."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Any

import structlog
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.teams.connector import Connector, ConnectorError
from bot.teams.outgoing import SEND, wall_ms
from plumbing.urgency import yield_to_people
from timebot.state.db import unit_of_work
from timebot.state.lanes import BULK
from timebot.state.queue import DONE, FAILED, QUEUED, FinishBatch, claim_rows
from timebot.state.retry import Backoff, after_failure, is_temporary
from timebot.state.teams_models import TeamsOutgoing, TeamsTenant, TeamsUser
from timebot.state.worker import PollingWorker

log = structlog.get_logger("timebot.teams.sender")

BACKOFF = Backoff(first_ms=1_000, max_ms=300_000)
MAX_FAILURES = 5
TARGET_WAIT_MS = 500  # an update whose card has not gone yet: tried again this much later
MAX_TARGET_WAITS = 120
NOT_SERVING = "the tenant does not serve the row's organisation (any more): not sent"
REMOVED = "the user removed the bot or is gone (403/404): not sent"


class TeamsSenderWorker(PollingWorker):
    name = "teams-sender"

    def __init__(self, sessions: async_sessionmaker[AsyncSession],
                 reads: async_sessionmaker[AsyncSession], connector: Connector, *,
                 batch: int = 100, at_once: int = 32, lease_ms: int = 120_000,
                 poll_seconds: float = 1.0, backoff: Backoff = BACKOFF,
                 max_failures: int = MAX_FAILURES) -> None:
        super().__init__(poll_seconds)
        self.sessions, self.reads, self.connector = sessions, reads, connector
        self.batch, self.at_once, self.lease_ms = batch, at_once, lease_ms
        self.backoff, self.max_failures = backoff, max_failures
        self.paused_until_ms = 0

    async def run_once(self) -> int:
        now = wall_ms()
        if now < self.paused_until_ms:
            await asyncio.sleep((self.paused_until_ms - now) / 1000)
            now = wall_ms()
        rows = await claim_rows(self.sessions, TeamsOutgoing, owner=self.owner, now_ms=now,
                                lease_ms=self.lease_ms, limit=self.batch,
                                priority_column=TeamsOutgoing.priority)
        if not rows:
            return 0
        serving, removed = await self._reachable(rows)
        lanes: dict[str, list[TeamsOutgoing]] = defaultdict(list)
        for row in rows:  # claim order: interactive first, then by seq
            lanes[row.conversation_id].append(row)
        finished = FinishBatch(self.sessions, TeamsOutgoing, self.owner, flush_seconds=0.25)
        calls = asyncio.Semaphore(self.at_once)
        await asyncio.gather(*(self._lane(lane, serving, removed, calls, finished)
                               for lane in lanes.values()))
        await finished.flush()
        return len(rows)

    async def _reachable(self, rows: list[TeamsOutgoing]
                         ) -> tuple[dict[str, str], set[tuple[str, str]]]:
        """The organisation each tenant of the batch serves now (connected ones only), and
        the (tenant, conversation) pairs of users who removed the bot."""
        tenants = {row.tenant_id for row in rows}
        conversations = {row.conversation_id for row in rows}
        async with self.reads() as session:
            serving = {tenant: organisation for tenant, organisation in (await session.execute(
                select(TeamsTenant.tenant_id, TeamsTenant.organisation_id).where(
                    TeamsTenant.tenant_id.in_(tenants),
                    TeamsTenant.removed_at_ms.is_(None)))).all()}
            removed = {(tenant, conversation) for tenant, conversation in (await session.execute(
                select(TeamsUser.tenant_id, TeamsUser.conversation_id).where(
                    TeamsUser.conversation_id.in_(conversations),
                    TeamsUser.removed_at_ms.is_not(None)))).all() if conversation}
        return serving, removed

    async def _lane(self, lane: list[TeamsOutgoing], serving: dict[str, str],
                    removed: set[tuple[str, str]], calls: asyncio.Semaphore,
                    finished: FinishBatch) -> None:
        for row in lane:
            if serving.get(row.tenant_id) != row.organisation_id:
                log.warning("teams_send_refused", row=row.id, tenant=row.tenant_id,
                            organisation=row.organisation_id, reason="tenant")
                await finished.add(row.id, status=FAILED, last_error=NOT_SERVING)
                continue
            if (row.tenant_id, row.conversation_id) in removed:
                await finished.add(row.id, status=FAILED, last_error=REMOVED)
                continue
            if row.priority == BULK:
                await yield_to_people()
            async with calls:
                outcome = await self._call(row, removed)
            await finished.add(row.id, **outcome)

    async def _call(self, row: TeamsOutgoing, removed: set[tuple[str, str]]
                    ) -> dict[str, Any]:
        """Make the row's call; the row's new columns."""
        try:
            if row.method == SEND:
                activity_id = await self.connector.send(row.service_url, row.conversation_id,
                                                        row.activity)
                return {"status": DONE, "activity_id": activity_id or None,
                        "sent_ms": wall_ms(), "last_error": None}
            target = await self._target(row)
            if target is None or target.status == FAILED:
                return {"status": FAILED, "last_error": "its card was never sent"}
            if target.activity_id is None:  # the card goes first
                if row.attempts >= MAX_TARGET_WAITS:
                    return {"status": FAILED, "last_error": "its card was not sent in time"}
                return {"status": QUEUED, "next_attempt_ms": wall_ms() + TARGET_WAIT_MS}
            await self.connector.update(row.service_url, row.conversation_id,
                                        target.activity_id, row.activity)
            return {"status": DONE, "sent_ms": wall_ms(), "last_error": None}
        except ConnectorError as error:
            return await self._refused(row, error, removed)
        except Exception as error:  # a row never stops the worker
            log.warning("teams_send_failed", row=row.id, error=str(error)[:200])
            return self._retry(row, temporary=is_temporary(error), error=str(error))

    async def _refused(self, row: TeamsOutgoing, error: ConnectorError,
                       removed: set[tuple[str, str]]) -> dict[str, Any]:
        if error.status == 429:
            pause_ms = int((error.retry_after or 1.0) * 1000)
            self.paused_until_ms = max(self.paused_until_ms, wall_ms() + pause_ms)
            log.info("teams_rate_limited", row=row.id, retry_after_ms=pause_ms)
            # the same call again after the pause: not a failure of the row
            return {"status": QUEUED, "next_attempt_ms": self.paused_until_ms,
                    "attempts": max(0, row.attempts - 1)}
        if error.status == 403 or (error.status == 404 and row.method == SEND):
            removed.add((row.tenant_id, row.conversation_id))
            await self._mark_removed(row)
            log.warning("teams_user_gone", row=row.id, tenant=row.tenant_id,
                        status=error.status)
            return {"status": FAILED, "last_error": f"{REMOVED}: {error}"[:500]}
        if error.status == 404:  # the card to update is gone
            return {"status": FAILED, "last_error": str(error)[:500]}
        temporary = error.status in (0, 401, 408) or error.status >= 500
        log.warning("teams_send_failed", row=row.id, status=error.status,
                    error=str(error)[:200])
        return self._retry(row, temporary=temporary, error=str(error))

    def _retry(self, row: TeamsOutgoing, *, temporary: bool, error: str) -> dict[str, Any]:
        failures = int(row.context.get("failures", 0)) if isinstance(row.context, dict) else 0
        after = after_failure(attempts=row.attempts, failures=failures, temporary=temporary,
                              now_ms=wall_ms(), backoff=self.backoff,
                              max_failures=self.max_failures)
        return {"status": after.status, "next_attempt_ms": after.next_attempt_ms,
                "last_error": error[:500],
                "context": {**(row.context or {}), "failures": after.failures}}

    async def _target(self, row: TeamsOutgoing) -> TeamsOutgoing | None:
        async with self.reads() as session:
            return await session.get(TeamsOutgoing, str(row.context.get("target")))

    async def _mark_removed(self, row: TeamsOutgoing) -> None:
        async with unit_of_work(self.sessions) as session:
            await session.execute(update(TeamsUser).where(
                TeamsUser.tenant_id == row.tenant_id,
                TeamsUser.conversation_id == row.conversation_id,
                TeamsUser.removed_at_ms.is_(None)).values(removed_at_ms=wall_ms()))
