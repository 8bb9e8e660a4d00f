"""Staff nudges: when the person's `timesheetReminder` says (its timing and hour, in their
time zone, as the mail reminder), else on the last working day of their period (Friday, from
16:00 in their Slack time zone), a DM with "Submit now" when the timesheet is draft or
rejected; none when they are absent that day (any absence), nor on a day that is not a
working day for them (their work schedule and public holidays, GraphQL `scheduledDays`)."""

from __future__ import annotations

from datetime import UTC

import structlog
from sqlalchemy import select

from bot.chat.approvals import status_word
from bot.chat.nudge_schedule import local_day_bounds, reminder_slot, staff_nudge_due
from bot.chat.nudges import staff_nudge_text
from bot.slack.deps import SlackDeps
from bot.slack.nudge_preferences import NudgePreferences
from bot.slack.submit_now import submit_blocks
from timebot import l10n
from timebot.entry_rules import Rules
from timebot.errors import TimebotError
from timebot.notify.periods import DAY_MS, local_date, week_of
from timebot.notify.person_notify import SLACK, sends
from timebot.state.models import PersonLink

log = structlog.get_logger("timebot.slack.nudges")

OWN_STATE = f"""
query Own($person: SvcId!, $start: SvcTimestamp!, $end: SvcTimestamp!, $dayStart: SvcTimestamp!,
          $dayEnd: SvcTimestamp!) {{
  getApprovalState(personId: $person, startTime: $start, endTime: $end) {{ status }}
  getPerson(id: $person) {{ id {l10n.LOCALISATION_FIELDS} }}
  getTimeRecords(startTime: $dayStart, endTime: $dayEnd, absence: true,
                 filter: [{{personId: $person}}]) {{ id }}
}}"""
# An extension of the embedded service (schedules and holidays), sent only where offered.
OWN_PLAN_EXTENSION = """
query OwnPlan($person: SvcId!, $planStart: SvcTimestamp!, $planEnd: SvcTimestamp!) {
  getPerson(id: $person) { scheduledDays(startTime: $planStart, endTime: $planEnd) { workingDay } }
}"""


class StaffNudges:
    def __init__(self, deps: SlackDeps) -> None:
        self.deps = deps
        self.preferences = NudgePreferences(deps.runtime.state_sessions,
                                            deps.runtime.read_sessions)

    async def run(self, now: int, organisation_id: str) -> int:
        """Nudge everyone linked of the workspace's organisation whose period ends today,
        from 16:00 local; how many were sent."""
        async with self.deps.runtime.read_sessions() as session:
            links = list(await session.scalars(
                select(PersonLink).where(PersonLink.slack_user_id.is_not(None),
                                         PersonLink.organisation_id == organisation_id)))
        sent = 0
        for link in links:
            user = str(link.slack_user_id)
            tz = (await self.deps.identity.profile(user)).tz
            slot = reminder_slot(now, await self._rules(link))
            if slot is None:
                period = await self._period(link, now)
                if not staff_nudge_due(now, tz, period):
                    continue
            else:  # their timesheetReminder says when, as for the mail
                period, due = slot
                if not due:
                    continue
            period_key = f"{period[0]}"
            pref = await self.preferences.get(link.organisation_id, link.person_id, user)
            if pref.last_staff_nudge == period_key:
                continue
            try:
                if await self._staff_nudge(link, user, tz, period, now):
                    sent += 1
            except TimebotError as error:
                log.warning("staff_nudge_failed", person=link.person_id, error=str(error))
                continue
            await self.preferences.update(link.organisation_id, link.person_id, user,
                                          last_staff_nudge=period_key)
        return sent

    async def _period(self, link: PersonLink, now: int) -> tuple[int, int]:
        """The person's period holding now (their periodicity), else the UTC week."""
        rules = await self._rules(link)
        return week_of(now) if rules is None else rules.period(now)

    async def _rules(self, link: PersonLink) -> Rules | None:
        runtime = self.deps.runtime
        try:
            apikey = await runtime.directory.apikey_for(link.organisation_id, link.person_id)
        except TimebotError:
            return None
        return await runtime.entry_rules.rules(link.organisation_id, link.person_id, apikey)

    async def _staff_nudge(
        self, link: PersonLink, user: str, tz: str, period: tuple[int, int], now: int
    ) -> bool:
        apikey = await self.deps.runtime.directory.apikey_for(link.organisation_id,
                                                              link.person_id)
        if not await sends(self.deps.runtime.client, apikey, link.person_id, "reminder", SLACK):
            return False  # push off in their notification settings
        day_start, day_end = local_day_bounds(local_date(now, tz), tz)
        client = self.deps.runtime.client
        data = await client.execute(OWN_STATE, {
            "person": link.person_id, "start": period[0], "end": period[1],
            "dayStart": day_start, "dayEnd": day_end,
        }, apikey=apikey)
        if data.get("getTimeRecords"):
            return False  # absent today: no nudge
        if await client.offers("SvcPerson", "scheduledDays", apikey=apikey):
            plan = await client.execute(OWN_PLAN_EXTENSION, {
                "person": link.person_id,
                # the person's day (in the service's time zone for them) holding local noon
                "planStart": (day_start + day_end) // 2 - DAY_MS + 1,
                "planEnd": (day_start + day_end) // 2 + 1,
            }, apikey=apikey)
            planned = (plan.get("getPerson") or {}).get("scheduledDays") or []
            if any(not day.get("workingDay") for day in planned):
                return False  # a public holiday or a day off in their schedule: no nudge
        status = status_word((data.get("getApprovalState") or {}).get("status")) or "draft"
        if status not in ("draft", "rejected"):
            return False
        rules = await self._rules(link)
        key = f"staff:{link.person_id}:{period[0]}"
        with l10n.using(l10n.localisation_of(data.get("getPerson"))):  # their language
            text = staff_nudge_text(status, *period, now,
                                    None if rules is None else rules.periodicity,
                                    UTC if rules is None else rules.zone)
            blocks = submit_blocks(text, *period, key)
        await self.deps.sender.post(user, text, blocks, key=key, bulk=True)
        return True
