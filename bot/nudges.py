"""Nudges in Slack.

- Approvers: a nudge when a request has waited N days (the service's approvalReminder setting,
  else 2), then after 1, 2, 4, 7, 7… more days; or, with the daily digest on, one message a
  day at 09:00 in their time zone listing everything waiting. Snooze (1 hour, until tomorrow)
  and an off switch, from the nudge's buttons or `/timesheet nudges on|off|digest`.
- Staff: on the last working day of their period (Friday, from 16:00 in their Slack time zone)
  a nudge with "Submit now" when the timesheet is draft or rejected; none when they are absent
  that day (any absence), nor on a day that is not a working day for them (their work schedule
  and public holidays, GraphQL `scheduledDays`).
- Managers: `/timesheet remind [last]` reminds those of their team who have not submitted
  (sendTimesheetReminder, as the manager, plus a DM), never those submitted or approved.

The schedules are pure functions; `NudgesPart.tick()` applies them (the loop calls it every
`interval` seconds) with the business clock.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import TYPE_CHECKING, Any

import structlog
from slack_bolt.async_app import AsyncAck
from sqlalchemy import select

from bot.approvals import (
    APPROVE,
    REJECT,
    Request,
    parse_ref,
    period_text,
    slack_time,
    status_word,
)
from bot.commands import CommandContext
from timebot.errors import PermissionRefused, ServiceRequestError, TimebotError
from timebot.notify.periods import DAY_MS, local_date, previous_week, week_of, zone
from timebot.state.db import unit_of_work
from timebot.state.models import PersonLink, SlackNudgePreference, SlackOutgoing

if TYPE_CHECKING:
    from bot.app import SlackBot

log = structlog.get_logger("timebot.slack.nudges")

SNOOZE = "timebot_nudge_snooze"
NUDGES_OFF = "timebot_nudge_off"
SUBMIT_NOW = "timebot_submit_now"
DEFAULT_REMIND_DAYS = 2
MAX_INTERVAL_DAYS = 7
DIGEST_HOUR = 9
STAFF_HOUR = 16
DISCOVER_SECONDS = 3600.0  # how often the workspace's members are matched to people

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
OWN_STATE = """
query Own($person: SvcId!, $start: SvcTimestamp!, $end: SvcTimestamp!, $dayStart: SvcTimestamp!,
          $dayEnd: SvcTimestamp!) {
  getApprovalState(personId: $person, startTime: $start, endTime: $end) { status }
  getTimeRecords(startTime: $dayStart, endTime: $dayEnd, absence: true,
                 filter: [{personId: $person}]) { id }
}"""
# An extension of the embedded service (schedules and holidays), sent only where offered.
OWN_PLAN_EXTENSION = """
query OwnPlan($person: SvcId!, $planStart: SvcTimestamp!, $planEnd: SvcTimestamp!) {
  getPerson(id: $person) { scheduledDays(startTime: $planStart, endTime: $planEnd) { workingDay } }
}"""
SUBMIT = """
mutation Submit($person: SvcId!, $start: SvcTimestamp!, $end: SvcTimestamp!) {
  submitTimesheet(personId: $person, startTime: $start, endTime: $end) { id status }
}"""
REMIND_SETTING = "query { currentOrganisation { timeSettings { approvalReminder { value } } } }"


# --- pure rules ---------------------------------------------------------------------------


def to_remind(states: Iterable[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """(people to remind, names skipped): draft, rejected or empty periods are reminded; a
    submitted (waiting on someone else) or approved one never."""
    remind: list[dict[str, Any]] = []
    skipped: list[str] = []
    for state in states:
        person = state.get("person") or {}
        if status_word(state.get("status")) in ("submitted", "approved"):
            skipped.append(str(person.get("name", "")))
        else:
            remind.append(person)
    return remind, skipped


def approver_nudge_due(
    waiting_since_ms: int, count: int, last_ms: int | None, now_ms: int, after_days: int
) -> bool:
    """First after `after_days` of waiting, then after 1, 2, 4, 7, 7… more days."""
    if now_ms - waiting_since_ms < after_days * DAY_MS:
        return False
    if count == 0 or last_ms is None:
        return True
    interval_days: int = min(2 ** (count - 1), MAX_INTERVAL_DAYS)
    return now_ms - last_ms >= interval_days * DAY_MS


def snoozed(pref: SlackNudgePreference | None, now_ms: int) -> bool:
    return pref is not None and (
        pref.off or (pref.snoozed_until_ms is not None and pref.snoozed_until_ms > now_ms)
    )


def snooze_until(choice: str, now_ms: int, tz: str | None) -> int:
    """'1h' → an hour from now; 'tomorrow' → 09:00 tomorrow in their time zone."""
    if choice == "1h":
        return now_ms + 3_600_000
    tomorrow = local_date(now_ms, tz) + timedelta(days=1)
    moment = datetime.combine(tomorrow, time(DIGEST_HOUR), zone(tz))
    return int(moment.timestamp() * 1000)


def staff_nudge_due(now_ms: int, tz: str | None, period: tuple[int, int]) -> bool:
    """The last working day (Friday) of the period, from 16:00 local, before it ends."""
    local = datetime.fromtimestamp(now_ms / 1000, zone(tz))
    start, end = period
    last_day = datetime.fromtimestamp((end - 1) / 1000, UTC).date()
    friday = last_day - timedelta(days=(last_day.weekday() - 4) % 7)
    return local.date() == friday and local.hour >= STAFF_HOUR and start <= now_ms


def local_day_bounds(day: date, tz: str | None) -> tuple[int, int]:
    start = datetime.combine(day, time(0), zone(tz))
    return int(start.timestamp() * 1000), int((start + timedelta(days=1)).timestamp() * 1000)


def nudge_controls() -> dict[str, Any]:
    return {"type": "actions", "block_id": "nudge", "elements": [
        {"type": "button", "action_id": SNOOZE, "value": "1h",
         "text": {"type": "plain_text", "text": "Snooze 1 hour"}},
        {"type": "button", "action_id": f"{SNOOZE}_tomorrow", "value": "tomorrow",
         "text": {"type": "plain_text", "text": "Until tomorrow"}},
        {"type": "button", "action_id": NUDGES_OFF, "value": "off",
         "text": {"type": "plain_text", "text": "Turn nudges off"}},
    ]}


def submit_blocks(text: str, start_ms: int, end_ms: int, key: str) -> list[dict[str, Any]]:
    """A nudge with "Submit now"; the button carries the dedupe key the DM is queued with, so a
    click finds its DM whether or not Slack's answer (channel, ts) is recorded yet."""
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": text}},
        {"type": "actions", "block_id": "submit", "elements": [{
            "type": "button", "action_id": SUBMIT_NOW, "style": "primary",
            "value": json.dumps([start_ms, end_ms, key]),
            "text": {"type": "plain_text", "text": "Submit now"},
        }]},
    ]


@dataclass(frozen=True)
class Waiting:
    row_id: str
    request: Request
    person_name: str
    approver_id: str
    slack_user: str
    organisation_id: str
    since_ms: int


# --- the part ---------------------------------------------------------------------------


class NudgesPart:
    def __init__(self, bot: SlackBot, interval_seconds: float = 60.0) -> None:
        self.bot = bot
        self.interval_seconds = interval_seconds
        self._task: asyncio.Task[None] | None = None
        self._discovered_at: float | None = None
        self.discover_every = DISCOVER_SECONDS
        bot.registry.add("/timesheet", "remind", self.remind,
                         "[last] remind those of your team who have not submitted")
        bot.registry.add("/timesheet", "nudges", self.set_preference,
                         "on | off | digest | instant: your approval nudges")
        bot.app.action(SNOOZE)(self._on_snooze)
        bot.app.action(f"{SNOOZE}_tomorrow")(self._on_snooze)
        bot.app.action(NUDGES_OFF)(self._on_off)
        bot.app.action(SUBMIT_NOW)(self._on_submit_now)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name="slack-nudges")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.interval_seconds)
            try:
                await self.tick()
            except Exception:  # the service or Slack away for a moment: next tick
                log.exception("nudge_tick_failed")

    async def tick(self) -> None:
        await self.nudge_approvers()
        await self.nudge_staff()

    # --- managers -------------------------------------------------------------------------

    async def remind(self, context: CommandContext) -> None:
        now = self.bot.runtime.clock.now_ms()
        last = context.args.strip().lower().startswith("last")
        start, end = previous_week(now) if last else week_of(now)
        team = await context.gql(TEAM_QUERY)
        members = [
            r["value"] for r in team["currentPerson"]["relations"]["managerOf"]["persons"]
            if r and r.get("value")
        ]
        if not members:
            await context.respond("You manage nobody, so there is no one to remind.")
            return
        states = (await context.gql(
            TEAM_STATES, {"ids": [m["id"] for m in members], "start": start, "end": end}
        ))["getTeamApprovalStates"]
        remind, skipped = to_remind(states)
        period = period_text(start, end)
        if not remind:
            await context.respond(f"Everyone of your team has submitted {period}.")
            return
        await context.gql(
            SEND_REMINDER, {"ids": [p["id"] for p in remind], "start": start, "end": end})
        emails = {m["id"]: m.get("email") for m in members}
        in_slack: list[str] = []
        messages: list[tuple[str, str, Sequence[dict[str, Any]] | None, str | None]] = []
        today = local_date(now, context.person.tz).isoformat()
        for person in remind:
            user = await self.bot.identity.slack_user_for(str(person["id"]),
                                                          emails.get(person["id"]))
            if user is None:
                continue
            in_slack.append(str(person.get("name")))
            text = (f"{context.person.name} reminds you to submit your timesheet for "
                    f"{period}.")
            key = f"remind:{person['id']}:{start}:{today}"
            messages.append((user, text, submit_blocks(text, start, end, key), key))
        await self.bot.sender.post_many(messages)
        names = ", ".join(str(p.get("name")) for p in remind)
        answer = f"Reminded {len(remind)} for {period}: {names}."
        if skipped:
            answer += f" Not reminded (submitted or approved): {', '.join(skipped)}."
        if len(in_slack) < len(remind):
            answer += f" {len(remind) - len(in_slack)} by e-mail only (not in Slack)."
        await context.respond(answer)

    # --- preferences ----------------------------------------------------------------------

    async def _preference(
        self, organisation_id: str, person_id: str, slack_user: str
    ) -> SlackNudgePreference:
        async with unit_of_work(self.bot.runtime.state_sessions) as session:
            pref = await session.get(SlackNudgePreference, (organisation_id, person_id))
            if pref is None:
                pref = SlackNudgePreference(
                    organisation_id=organisation_id, person_id=person_id,
                    slack_user_id=slack_user, off=False, digest=False, nudged={})
                session.add(pref)
            return pref

    async def _update_preference(
        self, organisation_id: str, person_id: str, slack_user: str, **values: Any
    ) -> None:
        await self._preference(organisation_id, person_id, slack_user)
        async with unit_of_work(self.bot.runtime.state_sessions) as session:
            pref = await session.get(SlackNudgePreference, (organisation_id, person_id))
            assert pref is not None
            for name, value in values.items():
                setattr(pref, name, value)

    async def set_preference(self, context: CommandContext) -> None:
        word = context.args.strip().lower()
        changes: dict[str, dict[str, Any]] = {
            "on": {"off": False, "snoozed_until_ms": None},
            "off": {"off": True},
            "digest": {"digest": True, "off": False},
            "instant": {"digest": False, "off": False},
        }
        if word not in changes:
            await context.respond("Use `/timesheet nudges on`, `off`, `digest` or `instant`.")
            return
        person = context.person
        await self._update_preference(person.organisation_id, person.person_id,
                                      person.slack_user_id, **changes[word])
        answers = {"on": "Approval nudges are on.", "off": "Approval nudges are off.",
                   "digest": "You get one digest a day at 09:00 of what waits for you.",
                   "instant": "You get a nudge per request again."}
        await context.respond(answers[word])

    async def _on_snooze(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        user_id = str((body.get("user") or {}).get("id", ""))
        choice = str(body["actions"][0].get("value", "1h"))
        person = await self.bot.person_or_prompt(user_id, self._channel(body))
        if person is None:
            return
        until = snooze_until(choice, self.bot.runtime.clock.now_ms(), person.tz)
        await self._update_preference(person.organisation_id, person.person_id, user_id,
                                      snoozed_until_ms=until)
        await self.bot.ephemeral(self._channel(body), user_id,
                                 f"Nudges snoozed until {slack_time(until)}.")

    async def _on_off(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        user_id = str((body.get("user") or {}).get("id", ""))
        person = await self.bot.person_or_prompt(user_id, self._channel(body))
        if person is None:
            return
        await self._update_preference(person.organisation_id, person.person_id, user_id,
                                      off=True)
        await self.bot.ephemeral(self._channel(body), user_id,
                                 "Approval nudges are off; `/timesheet nudges on` to resume.")

    async def _nudge_message(
        self, body: dict[str, Any], user_id: str, channel: str, key: str | None
    ) -> SlackOutgoing | None:
        """The DM whose button was clicked. By its dedupe key: the row exists before the DM is
        sent, while Slack's answer (channel, ts) is recorded only after it (with the sender's
        next flush), so a prompt click must not depend on it. Buttons without a key (older
        messages) by (channel, ts)."""
        if key is not None:
            row = await self.bot.sender.queued_with_key(key)
            return row if row is not None and row.channel in (user_id, channel) else None
        message_ts = str((body.get("container") or {}).get("message_ts") or "")
        return await self.bot.sender.posted(channel, message_ts) if message_ts else None

    @staticmethod
    def _channel(body: dict[str, Any]) -> str:
        return str((body.get("channel") or {}).get("id", "")) or str(
            (body.get("user") or {}).get("id", ""))

    # --- approvers ------------------------------------------------------------------------

    async def _waiting(self) -> list[Waiting]:
        """Requests shown in Slack and not decided yet (newest row per approver/request)."""
        async with self.bot.runtime.state_sessions() as session:
            rows = list(await session.scalars(
                select(SlackOutgoing).where(
                    SlackOutgoing.method == "chat.postMessage",
                    SlackOutgoing.ref.startswith("approval:"),
                ).order_by(SlackOutgoing.seq)
            ))
        found: dict[str, Waiting] = {}
        decided: set[str] = set()
        for row in rows:
            if row.ref is None or parse_ref(row.ref) is None:
                continue
            if row.context.get("outcome"):
                decided.add(row.ref)
                continue
            if row.ref in found or row.context.get("nudge"):
                continue
            ctx = row.context
            found[row.ref] = Waiting(
                row.id,
                Request(str(ctx["submitId"]), parse_ref(row.ref)[1],  # type: ignore[index]
                        str(ctx["timesheetId"]), str(ctx["personId"]), int(ctx["startTime"]),
                        int(ctx["endTime"])),
                str(ctx.get("personName", "")), str(ctx.get("approverId", "")), row.channel,
                str(ctx.get("organisationId", "")), row.created_ms,
            )
        return [w for ref, w in found.items() if ref not in decided]

    async def _remind_after_days(self, organisation_id: str) -> int:
        key = await self.bot.runtime.directory.integration_key(organisation_id)
        data = await self.bot.runtime.client.execute(REMIND_SETTING, apikey=key)
        value = (((data.get("currentOrganisation") or {}).get("timeSettings") or {})
                 .get("approvalReminder") or {}).get("value")
        return int(value) if value else DEFAULT_REMIND_DAYS

    async def nudge_approvers(self) -> int:
        now = self.bot.runtime.clock.now_ms()
        waiting = await self._waiting()
        by_approver: dict[tuple[str, str], list[Waiting]] = {}
        for item in waiting:
            by_approver.setdefault((item.organisation_id, item.approver_id), []).append(item)
        after: dict[str, int] = {}
        sent = 0
        for (org_id, approver_id), items in by_approver.items():
            if org_id not in after:
                after[org_id] = await self._remind_after_days(org_id)
            user = items[0].slack_user
            pref = await self._preference(org_id, approver_id, user)
            if snoozed(pref, now):
                continue
            tz = (await self.bot.identity.profile(user)).tz
            if pref.digest:
                day = local_date(now, tz).isoformat()
                due = [i for i in items if now - i.since_ms >= after[org_id] * DAY_MS]
                if due and pref.last_digest_day != day and \
                        datetime.fromtimestamp(now / 1000, zone(tz)).hour >= DIGEST_HOUR:
                    await self._digest(user, due, f"digest:{approver_id}:{day}")
                    await self._update_preference(org_id, approver_id, user,
                                                  last_digest_day=day)
                    sent += 1
                continue
            nudged = dict(pref.nudged or {})
            for item in items:
                count, last = nudged.get(item.request.submit_id, [0, None])
                if not approver_nudge_due(item.since_ms, int(count), last, now, after[org_id]):
                    continue
                await self._nudge(item, int(count) + 1)
                nudged[item.request.submit_id] = [int(count) + 1, now]
                sent += 1
            if nudged != (pref.nudged or {}):
                await self._update_preference(org_id, approver_id, user, nudged=nudged)
        return sent

    async def _nudge(self, item: Waiting, count: int) -> None:
        period = period_text(item.request.start_ms, item.request.end_ms)
        text = (f"Reminder: the timesheet of {item.person_name} for {period} has waited for "
                f"your approval since {slack_time(item.since_ms)}.")
        value = item.request.encode()
        blocks: list[dict[str, Any]] = [
            {"type": "section", "text": {"type": "mrkdwn", "text": text}},
            {"type": "actions", "block_id": "decision", "elements": [
                {"type": "button", "action_id": APPROVE, "style": "primary", "value": value,
                 "text": {"type": "plain_text", "text": "Approve"}},
                {"type": "button", "action_id": REJECT, "style": "danger", "value": value,
                 "text": {"type": "plain_text", "text": "Reject"}},
            ]},
            nudge_controls(),
        ]
        async with self.bot.runtime.state_sessions() as session:
            original = await session.get(SlackOutgoing, item.row_id)
        context = dict(original.context) if original is not None else {}
        await self.bot.sender.post(
            item.slack_user, text, blocks,
            key=f"nudge:{item.request.submit_id}:{item.approver_id}:{count}",
            ref=f"approval:{item.request.submit_id}:{item.request.stage}:{item.approver_id}",
            context={**context, "nudge": count},
        )

    async def _digest(self, user: str, items: list[Waiting], key: str) -> None:
        lines = [f"*{len(items)} timesheet(s) wait for your approval:*"]
        blocks: list[dict[str, Any]] = [
            {"type": "section", "text": {"type": "mrkdwn", "text": lines[0]}}]
        for item in items:
            value = item.request.encode()
            blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": (
                f"{item.person_name} - {period_text(item.request.start_ms, item.request.end_ms)}"
                f" - since {slack_time(item.since_ms)}")}})
            blocks.append({"type": "actions", "elements": [
                {"type": "button", "action_id": APPROVE, "style": "primary", "value": value,
                 "text": {"type": "plain_text", "text": "Approve"}},
                {"type": "button", "action_id": REJECT, "style": "danger", "value": value,
                 "text": {"type": "plain_text", "text": "Reject"}},
            ]})
        blocks.append(nudge_controls())
        await self.bot.sender.post(user, lines[0].strip("*"), blocks[:50], key=key)

    # --- staff ----------------------------------------------------------------------------

    async def nudge_staff(self) -> int:
        now = self.bot.runtime.clock.now_ms()
        period = week_of(now)
        if self._discovered_at is None or \
                asyncio.get_running_loop().time() - self._discovered_at >= self.discover_every:
            await self.bot.identity.discover()
            self._discovered_at = asyncio.get_running_loop().time()
        async with self.bot.runtime.state_sessions() as session:
            links = list(await session.scalars(
                select(PersonLink).where(PersonLink.slack_user_id.is_not(None))))
        sent = 0
        for link in links:
            user = str(link.slack_user_id)
            tz = (await self.bot.identity.profile(user)).tz
            if not staff_nudge_due(now, tz, period):
                continue
            period_key = f"{period[0]}"
            pref = await self._preference(link.organisation_id, link.person_id, user)
            if pref.last_staff_nudge == period_key:
                continue
            try:
                if await self._staff_nudge(link, user, tz, period, now):
                    sent += 1
            except TimebotError as error:
                log.warning("staff_nudge_failed", person=link.person_id, error=str(error))
                continue
            await self._update_preference(link.organisation_id, link.person_id, user,
                                          last_staff_nudge=period_key)
        return sent

    async def _staff_nudge(
        self, link: PersonLink, user: str, tz: str, period: tuple[int, int], now: int
    ) -> bool:
        apikey = await self.bot.runtime.directory.apikey_for(link.organisation_id,
                                                             link.person_id)
        day_start, day_end = local_day_bounds(local_date(now, tz), tz)
        client = self.bot.runtime.client
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
        period_words = period_text(*period)
        text = (f"Your timesheet for {period_words} was rejected: correct it and submit again."
                if status == "rejected" else
                f"The week is ending: your timesheet for {period_words} is not submitted yet.")
        key = f"staff:{link.person_id}:{period[0]}"
        await self.bot.sender.post(user, text, submit_blocks(text, *period, key), key=key)
        return True

    async def _on_submit_now(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        user_id = str((body.get("user") or {}).get("id", ""))
        channel = self._channel(body)
        person = await self.bot.person_or_prompt(user_id, channel)
        if person is None:
            return
        value = json.loads(str(body["actions"][0].get("value", "[0,0]")))
        start, end = value[0], value[1]
        key = str(value[2]) if len(value) > 2 else None
        try:
            await self.bot.runtime.client.execute(
                SUBMIT, {"person": person.person_id, "start": int(start), "end": int(end)},
                apikey=person.apikey)
        except (PermissionRefused, ServiceRequestError) as error:
            await self.bot.ephemeral(channel, user_id, f"Not submitted: {error}")
            return
        text = f"Submitted your timesheet for {period_text(int(start), int(end))}."
        row = await self._nudge_message(body, user_id, channel, key)
        if row is not None:
            await self.bot.sender.update_row(
                row.id, text, [{"type": "section", "text": {"type": "mrkdwn", "text": text}}])
        else:
            await self.bot.ephemeral(channel, user_id, text)
