"""Approver nudges: a request shown in Slack and still undecided is nudged when it has waited
N days (the service's approvalReminder setting, else 2), then after 1, 2, 4, 7, 7… more days;
an approver with the daily digest on gets instead one message a day at 09:00 in their time
zone listing everything waiting. Snoozed or switched-off approvers get nothing
(bot.slack.nudge_preferences). Each nudge and digest is in the approver's language and formats."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.chat.approvals import REQUEST_REF, Request, parse_ref
from bot.chat.nudge_schedule import DEFAULT_REMIND_DAYS, DIGEST_HOUR, approver_nudge_due, snoozed
from bot.chat.nudges import approver_nudge, digest
from bot.slack.deps import SlackDeps
from bot.slack.nudge_preferences import NudgePreferences, nudge_controls
from bot.slack.render import SLACK as SLACK_MARKUP
from bot.slack.render import blocks_of
from timebot import l10n
from timebot.l10n.loading import load_localisation
from timebot.notify.periods import DAY_MS, local_date, zone
from timebot.notify.person_notify import SLACK, sends
from timebot.state.chat_queue import unsettled_with_ref
from timebot.state.models import SlackOutgoing

REMIND_SETTING = "query { currentOrganisation { timeSettings { approvalReminder { value } } } }"


@dataclass(frozen=True)
class Waiting:
    """A request DM to an approver, not decided yet: the row that asked, since when."""

    row_id: str
    request: Request
    person_name: str
    approver_id: str
    slack_user: str
    organisation_id: str
    since_ms: int


class ApproverNudges:
    def __init__(self, deps: SlackDeps) -> None:
        self.deps = deps
        self.preferences = NudgePreferences(deps.runtime.state_sessions,
                                            deps.runtime.read_sessions)

    async def _waiting(self) -> list[Waiting]:
        """Requests this installation showed in Slack and not decided yet (the first row per
        approver/request), read by index: its rows not settled, not the queue's history."""
        runtime = self.deps.runtime
        rows = await unsettled_with_ref(
            runtime.read_sessions, runtime.state_sessions, SlackOutgoing, REQUEST_REF,
            runtime.clock.now_ms(), self.deps.sender.mine(),
            SlackOutgoing.method == "chat.postMessage")
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
        key = await self.deps.runtime.directory.integration_key(organisation_id)
        data = await self.deps.runtime.client.execute(REMIND_SETTING, apikey=key)
        value = (((data.get("currentOrganisation") or {}).get("timeSettings") or {})
                 .get("approvalReminder") or {}).get("value")
        return int(value) if value else DEFAULT_REMIND_DAYS

    async def run(self, now: int, organisation_id: str) -> int:
        """Nudge (or send the digest to) every approver of the workspace's organisation due at
        `now`; how many were sent."""
        waiting = [item for item in await self._waiting()
                   if item.organisation_id == organisation_id]
        by_approver: dict[tuple[str, str], list[Waiting]] = {}
        for item in waiting:
            by_approver.setdefault((item.organisation_id, item.approver_id), []).append(item)
        after: dict[str, int] = {}
        sent = 0
        for (org_id, approver_id), items in by_approver.items():
            if org_id not in after:
                after[org_id] = await self._remind_after_days(org_id)
            user = items[0].slack_user
            pref = await self.preferences.get(org_id, approver_id, user)
            if snoozed(pref, now) or not await sends(
                    self.deps.runtime.client, await self.deps.runtime.directory.integration_key(
                        org_id), approver_id, "approvalReminder", SLACK):
                continue
            tz = (await self.deps.identity.profile(user)).tz
            if pref.digest:
                day = local_date(now, tz).isoformat()
                due = [i for i in items if now - i.since_ms >= after[org_id] * DAY_MS]
                if due and pref.last_digest_day != day and \
                        datetime.fromtimestamp(now / 1000, zone(tz)).hour >= DIGEST_HOUR:
                    with l10n.using(await self._localisation(org_id, approver_id)):
                        await self._digest(user, due, f"digest:{approver_id}:{day}")
                    await self.preferences.update(org_id, approver_id, user,
                                                  last_digest_day=day)
                    sent += 1
                continue
            nudged = dict(pref.nudged or {})
            for item in items:
                count, last = nudged.get(item.request.submit_id, [0, None])
                if not approver_nudge_due(item.since_ms, int(count), last, now, after[org_id]):
                    continue
                with l10n.using(await self._localisation(org_id, approver_id)):
                    await self._nudge(item, int(count) + 1)
                nudged[item.request.submit_id] = [int(count) + 1, now]
                sent += 1
            if nudged != (pref.nudged or {}):
                await self.preferences.update(org_id, approver_id, user, nudged=nudged)
        return sent

    async def _localisation(self, organisation_id: str, approver_id: str
                            ) -> l10n.Localisation:
        key = await self.deps.runtime.directory.integration_key(organisation_id)
        return await load_localisation(self.deps.runtime.client, key, approver_id)

    async def _nudge(self, item: Waiting, count: int) -> None:
        nudge = approver_nudge(item.request, item.person_name, item.since_ms, SLACK_MARKUP)
        text, blocks = nudge.text, [*blocks_of(nudge), nudge_controls()]
        async with self.deps.runtime.read_sessions() as session:
            original = await session.get(SlackOutgoing, item.row_id)
        context = dict(original.context) if original is not None else {}
        await self.deps.sender.post(
            item.slack_user, text, blocks,
            key=f"nudge:{item.request.submit_id}:{item.approver_id}:{count}",
            ref=f"approval:{item.request.submit_id}:{item.request.stage}:{item.approver_id}",
            context={**context, "nudge": count}, bulk=True,
        )

    async def _digest(self, user: str, items: list[Waiting], key: str) -> None:
        # Slack takes 50 blocks: the header, two per item, "Approve all" and the controls.
        message = digest([(item.request, item.person_name, item.since_ms) for item in items],
                         SLACK_MARKUP, limit=23)
        blocks = [*blocks_of(message), nudge_controls()]
        await self.deps.sender.post(user, message.text, blocks, key=key, bulk=True)
