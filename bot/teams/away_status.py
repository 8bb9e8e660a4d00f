"""Away approvers noticed where Teams tells it (#42), as a Slack status is (bot.slack.away_status):
a Teams approver's automatic replies (or, when those cannot be read, their presence), read
from Microsoft Graph (bot.teams.graph), are mapped by bot.teams.graph_away (pure) and
recorded or cleared by bot.chat.away under the source "teams-status"; the review dispatch and
the escalation pass then read it with every other fact of absence (timebot.notify.away_facts):
the other approvers are asked with the reason, or the administrators after the delay.

Teams pushes nothing here, so the bot asks: `watch(user)` when a review card is queued for an
approver (bot.teams.reviews) and while their cards wait undecided (bot.teams.nudges' tick).
It never holds the card: the check runs in the background, at most `concurrency` at once,
and a user is asked at most once per `cache_seconds` (a fan-out to 1,000 approvers is one read
each, not one a minute). A failure is "not known away" (nothing recorded, nothing cleared) with
one log line: 403 (the permission not granted in that tenant) and 429 (Retry-After) quiet that
endpoint for the whole tenant meanwhile, and until an endpoint first answers in a tenant its
calls go one at a time (bot.teams.graph_gate), so 1,000 approvers of a tenant without consent
cost one refused call, not 1,000."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import structlog

from bot.chat.away import note_away
from bot.teams.graph import PRESENCE_PATH, REPLIES_PATH, GraphClient, GraphError
from bot.teams.graph_away import graph_away, seen_of
from bot.teams.graph_gate import GraphGate
from bot.teams.tenants import LinkedUser
from plumbing.tasks import BackgroundTasks
from timebot.notify.away_facts import TEAMS_STATUS
from timebot.notify.periods import local_date
from timebot.process.runtime import Runtime

log = structlog.get_logger("timebot.teams.away_status")

CACHE_SECONDS = 600.0
CONCURRENCY = 4


class TeamsAwayStatus:
    def __init__(self, runtime: Runtime, graph: GraphClient, *,
                 cache_seconds: float = CACHE_SECONDS, concurrency: int = CONCURRENCY) -> None:
        self.runtime, self.graph, self.cache_seconds = runtime, graph, cache_seconds
        self._asked: dict[tuple[str, str], float] = {}  # user -> not asked again before
        self.gate = GraphGate(cache_seconds)  # a tenant refusing or throttling is spared
        self._slots = asyncio.Semaphore(concurrency)
        self._tasks = BackgroundTasks()

    def watch(self, user: LinkedUser, time_zone: str | None = None) -> bool:
        """Check the user's status in the background unless asked within `cache_seconds`;
        whether a check was started. `time_zone`: the person's, whose days the return is."""
        key = (user.tenant_id, user.aad_object_id)
        now = time.monotonic()
        if self._asked.get(key, 0.0) > now:
            return False
        if len(self._asked) > 10_000:
            self._asked = {k: until for k, until in self._asked.items() if until > now}
        self._asked[key] = now + self.cache_seconds
        self._tasks.start(self._check_logged(user, time_zone), "teams-away-status")
        return True

    async def settled(self) -> None:
        """Wait for the checks under way (tests; a stop that lets them finish)."""
        await self._tasks.settled()

    async def stop(self) -> None:
        await self._tasks.stop()

    async def _check_logged(self, user: LinkedUser, time_zone: str | None) -> str:
        try:
            return await self.check(user, time_zone)
        except Exception:  # the database away for a moment: asked again after the cache
            log.exception("teams_away_check_failed", user=user.aad_object_id)
            return "failed"

    async def check(self, user: LinkedUser, time_zone: str | None = None) -> str:
        """Read the user's status now and record or clear their absence; what became of it."""
        async with self._slots:
            replies = await self._read(user, REPLIES_PATH)
            # The replies are the record of "out of office" (Teams' own "Schedule out of
            # office" sets them) and state the return; the presence only when they are unread.
            presence = None if replies is not None else await self._read(user, PRESENCE_PATH)
        now_ms = self.runtime.clock.now_ms()
        said = graph_away(replies, presence, now_ms, time_zone)
        if said is None:
            return "not known"
        away, until = said
        key = f"teams:{user.aad_object_id}:{seen_of(replies, presence)}"
        if away and until is None:  # seen again each day: the unknown return counts from it
            key += f":{local_date(now_ms, time_zone).isoformat()}"
        return await note_away(self.runtime, organisation_id=user.organisation_id,
                               person_id=user.person_id, away=away, until=until,
                               seen_ms=now_ms, source=TEAMS_STATUS, message_key=key)

    async def _read(self, user: LinkedUser, endpoint: str) -> dict[str, Any] | None:
        """One Graph read; None ("not known") when it failed or the tenant's endpoint is
        quiet (refused or throttled a moment ago: bot.teams.graph_gate)."""
        try:
            return await self.gate.call((user.tenant_id, endpoint), lambda: self.graph.user_get(
                user.tenant_id, user.aad_object_id, endpoint))
        except GraphError as error:
            log.info("teams_away_not_known", tenant=user.tenant_id, user=user.aad_object_id,
                     endpoint=endpoint, status=error.status, error=str(error)[:120])
            return None
