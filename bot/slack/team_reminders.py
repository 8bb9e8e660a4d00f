"""`/timesheet remind [last]`: a manager reminds those of their team who have not submitted
(sendTimesheetReminder, as the manager, plus a DM with "Submit now" to those in Slack), never
those submitted or approved. The manager's answer is in their language; each DM in the
reminded person's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.chat.approvals import period_text
from bot.chat.nudge_schedule import to_remind
from bot.slack.commands import CommandContext
from bot.slack.deps import SlackDeps
from bot.slack.mrkdwn import escape
from bot.slack.submit_now import submit_blocks
from timebot import l10n
from timebot.l10n import _
from timebot.l10n.loading import load_localisation
from timebot.notify.periods import local_date, previous_week, week_of
from timebot.notify.person_notify import SLACK, sends

TEAM_QUERY = """
query Team {
  currentPerson { id name relations { managerOf { persons { value { id name email } } } } }
}"""
TEAM_STATES = """
query States($ids: [SvcId!]!, $start: SvcTimestamp!, $end: SvcTimestamp!) {
  getTeamApprovalStates(personIds: $ids, startTime: $start, endTime: $end) {
    person { id name } status pendingApprovers { id name }
  }
}"""
SEND_REMINDER = """
mutation Remind($ids: [SvcId!]!, $start: SvcTimestamp!, $end: SvcTimestamp!) {
  sendTimesheetReminder(personIds: $ids, startTime: $start, endTime: $end)
}"""


class TeamReminders:
    def __init__(self, deps: SlackDeps) -> None:
        self.deps = deps

    async def remind(self, context: CommandContext) -> None:
        client = self.deps.runtime.client
        with l10n.using(await load_localisation(client, context.person.apikey,
                                                context.person.person_id)):
            await self._remind(context)

    async def _remind(self, context: CommandContext) -> None:
        now = self.deps.runtime.clock.now_ms()
        last = context.args.strip().lower().startswith("last")
        start, end = previous_week(now) if last else week_of(now)
        team = await context.gql(TEAM_QUERY)
        members = [
            r["value"] for r in team["currentPerson"]["relations"]["managerOf"]["persons"]
            if r and r.get("value")
        ]
        if not members:
            await context.respond(_("You manage nobody, so there is no one to remind."))
            return
        states = (await context.gql(
            TEAM_STATES, {"ids": [m["id"] for m in members], "start": start, "end": end}
        ))["getTeamApprovalStates"]
        remind, skipped = to_remind(states)
        period = period_text(start, end)
        if not remind:
            await context.respond(_("Everyone of your team has submitted {period}.").format(
                period=period))
            return
        await context.gql(
            SEND_REMINDER, {"ids": [p["id"] for p in remind], "start": start, "end": end})
        emails = {m["id"]: m.get("email") for m in members}
        in_slack: list[str] = []
        messages: list[tuple[str, str, Sequence[dict[str, Any]] | None, str | None]] = []
        today = local_date(now, context.person.tz).isoformat()
        key = await self.deps.runtime.directory.integration_key(context.person.organisation_id)
        for person in remind:
            user = await self.deps.identity.slack_user_for(str(person["id"]),
                                                           emails.get(person["id"]))
            if user is None or not await sends(
                    self.deps.runtime.client, await self.deps.runtime.directory.integration_key(
                        context.person.organisation_id), str(person["id"]), "reminder", SLACK):
                continue
            in_slack.append(str(person.get("name")))
            # In the reminded person's language and formats
            with l10n.using(await load_localisation(self.deps.runtime.client, key,
                                                    str(person["id"]))):
                text = _("{manager} reminds you to submit your timesheet for {period}.").format(
                    manager=escape(context.person.name), period=period_text(start, end))
                dedupe = f"remind:{person['id']}:{start}:{today}"
                messages.append((user, text, submit_blocks(text, start, end, dedupe), dedupe))
        await self.deps.sender.post_many(messages)
        names = ", ".join(str(p.get("name")) for p in remind)
        answer = _("Reminded {n} for {period}: {names}.").format(n=len(remind), period=period,
                                                                  names=names)
        if skipped:
            answer += " " + _("Not reminded (submitted or approved): {names}.").format(
                names=", ".join(skipped))
        if len(in_slack) < len(remind):
            answer += " " + _("{n} by e-mail only (not in Slack).").format(
                n=len(remind) - len(in_slack))
        await context.respond(answer)


def register(deps: SlackDeps) -> TeamReminders:
    """A command only: it adds no listener to the Slack app."""
    part = TeamReminders(deps)
    deps.registry.add("/timesheet", "remind", part.remind,
                      "[last] remind those of your team who have not submitted")
    return part
