"""Approver nudges and the daily digest in Teams, as proactive cards: a review card still
undecided is nudged when it has waited N days (the service's approvalReminder setting, else 2),
then after 1, 2, 4, 7, 7… more days (bot.chat.nudge_schedule); an approver who chose the daily
digest (timebot.notify.approvals.preference) gets instead one card a day from 09:00 in their
time zone listing what waits, with "Approve all (N)" behind a confirmation. Push or approval
updates off in their notification settings: nothing. In the approver's language and formats.
Under each nudge and digest: Snooze 1 hour, Until tomorrow, Turn nudges off
(bot.teams.nudge_controls); snoozed, nothing goes until the snooze ends (what fell due meanwhile
goes then); off, nothing until `timesheet nudges on`.

The nudge carries the request's ref, so the service's decision settles it in place like the
card it reminds of (bot.teams.reviews). Each goes once: its key names the request and the
nudge's number, the digest's the approver and the day (two processes ticking at once queue it
once). `tick()` runs every `interval` seconds, and asks again whether each approver it waits
for is away (bot.teams.away_status: Teams pushes no status change)."""

from __future__ import annotations

import asyncio
from datetime import datetime

import structlog

from bot.chat.approvals import REQUEST_REF, Request, parse_ref
from bot.chat.nudge_schedule import (
    DEFAULT_REMIND_DAYS,
    DIGEST_HOUR,
    approver_nudge_due,
    snoozed,
)
from bot.chat.nudges import approver_nudge, digest
from bot.chat.reach import reach
from bot.teams import cards, render
from bot.teams.away_status import TeamsAwayStatus
from bot.teams.nudge_controls import with_controls
from bot.teams.nudge_settings import TeamsNudgeSettings
from bot.teams.outgoing import SEND, Recipient, TeamsOutbox
from bot.teams.render import TEAMS
from bot.teams.tenants import TeamsTenants
from plumbing.tasks import stop_task
from timebot import l10n
from timebot.notify.approvals import DIGEST, preference
from timebot.notify.periods import DAY_MS, local_date, zone
from timebot.process.runtime import Runtime
from timebot.state.chat_queue import unsettled_with_ref
from timebot.state.db import unit_of_work
from timebot.state.queue import FAILED
from timebot.state.teams_models import TeamsOutgoing

log = structlog.get_logger("timebot.teams.nudges")

REMIND_SETTING = "query { currentOrganisation { timeSettings { approvalReminder { value } } } }"


def waiting_of(row: TeamsOutgoing) -> tuple[Request, str, int]:
    """The request a card asks, its person's name, since when it waits."""
    context = row.context
    parsed = parse_ref(str(row.ref))
    assert parsed is not None
    return (Request(str(context["submitId"]), parsed[1], str(context.get("timesheetId", "")),
                    str(context["personId"]), int(context["startTime"]),
                    int(context["endTime"])),
            str(context.get("personName", "")), row.created_ms)


class TeamsNudges:
    def __init__(self, runtime: Runtime, tenants: TeamsTenants, outbox: TeamsOutbox,
                 interval_seconds: float = 60.0, away: TeamsAwayStatus | None = None) -> None:
        self.runtime, self.tenants, self.outbox, self.away = runtime, tenants, outbox, away
        self.interval_seconds = interval_seconds
        self._task: asyncio.Task[None] | None = None
        self.settings = TeamsNudgeSettings(runtime)  # snoozed or off: bot.teams.nudge_controls

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name="teams-nudges")

    async def stop(self) -> None:
        task, self._task = self._task, None
        await stop_task(task)

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.interval_seconds)
            try:
                await self.tick()
            except Exception:  # the service or the database away for a moment: next tick
                log.exception("teams_nudge_tick_failed")

    async def _waiting(self) -> list[TeamsOutgoing]:
        """The review cards sent and not decided (not the nudges: the card they remind of),
        read by index: the rows not settled, not the queue's history."""
        rows = await unsettled_with_ref(
            self.runtime.read_sessions, self.runtime.state_sessions, TeamsOutgoing, REQUEST_REF,
            self.runtime.clock.now_ms(), TeamsOutgoing.method == SEND,
            TeamsOutgoing.status != FAILED)
        decided = {row.ref for row in rows if row.context.get("outcome")}
        return [row for row in rows if row.ref not in decided and not row.context.get("nudge")
                and parse_ref(str(row.ref)) is not None]

    async def _remind_after_days(self, organisation_id: str) -> int:
        key = await self.runtime.directory.integration_key(organisation_id)
        data = await self.runtime.client.execute(REMIND_SETTING, apikey=key)
        value = (((data.get("currentOrganisation") or {}).get("timeSettings") or {})
                 .get("approvalReminder") or {}).get("value")
        return int(value) if value else DEFAULT_REMIND_DAYS

    async def tick(self) -> int:
        """Nudge (or send the digest to) every approver due now; how many were queued."""
        now = self.runtime.clock.now_ms()
        by_approver: dict[tuple[str, str], list[TeamsOutgoing]] = {}
        for row in await self._waiting():
            approver = str(row.context.get("approverId", ""))
            by_approver.setdefault((row.organisation_id, approver), []).append(row)
        after: dict[str, int] = {}
        queued = 0
        for (organisation_id, approver_id), rows in by_approver.items():
            if organisation_id not in after:
                after[organisation_id] = await self._remind_after_days(organisation_id)
            user = await self.tenants.user_of_person(organisation_id, approver_id)
            if user is None or not user.conversation_id or not user.service_url:
                continue
            if snoozed(await self.settings.get(organisation_id, approver_id), now):
                continue
            reader = await reach(self.runtime, organisation_id, approver_id, "approvalReminder")
            if self.away is not None:  # still waiting on them: still away? (cached a while)
                self.away.watch(user, reader.time_zone if reader is not None else None)
            if reader is None:
                continue
            to = Recipient(user.tenant_id, organisation_id, user.conversation_id,
                           user.service_url)
            due = [row for row in rows if now - row.created_ms >= after[organisation_id]
                   * DAY_MS]
            with l10n.using(reader):
                if await preference(self.runtime, organisation_id, approver_id) == DIGEST:
                    queued += await self._digest(to, approver_id, due, now, reader.time_zone)
                    continue
                for row in rows:
                    count, last = (row.context.get("nudged") or [0, None])
                    if approver_nudge_due(row.created_ms, int(count), last, now,
                                          after[organisation_id]):
                        queued += await self._nudge(to, row, int(count) + 1, now)
        return queued

    async def _nudge(self, to: Recipient, row: TeamsOutgoing, count: int, now: int) -> bool:
        request, name, since = waiting_of(row)
        key = f"teams-nudge:{request.submit_id}:{row.context.get('approverId')}:{count}"
        said = with_controls(approver_nudge(request, name, since, TEAMS), key)
        added = await self.outbox.send(
            to, cards.message(render.card_of(said), render.preview(said)), key=key,
            ref=row.ref, context={**row.context, "nudge": count})
        async with unit_of_work(self.runtime.state_sessions) as session:
            stored = await session.get(TeamsOutgoing, row.id)
            if stored is not None:
                stored.context = {**stored.context, "nudged": [count, now]}
        return added

    async def _digest(self, to: Recipient, approver_id: str, due: list[TeamsOutgoing],
                      now: int, time_zone: str | None) -> bool:
        if not due or datetime.fromtimestamp(now / 1000, zone(time_zone)).hour < DIGEST_HOUR:
            return False
        day = local_date(now, time_zone).isoformat()
        key = f"teams-digest:{approver_id}:{day}"
        said = with_controls(digest([waiting_of(row) for row in due], TEAMS), key)
        return await self.outbox.send(
            to, cards.message(render.card_of(said), render.preview(said)), key=key,
            context={"approverId": approver_id, "digest": day})
