"""The App Home tab: this week's hours by day, the timesheet's status, the time off left
(allowances, as of today) and, for approvers, what
waits for them with the same Approve / Reject buttons as the DMs. Read as the person (own key),
published with views.publish when the tab is opened."""

from __future__ import annotations

from collections import defaultdict
from datetime import date, timedelta
from functools import partial
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import structlog
from slack_bolt.async_app import AsyncApp

from bot.chat.approvals import Request, period_text, status_word
from bot.chat.person import NotIdentified
from bot.slack.approval_blocks import pending_blocks
from bot.slack.approve_all import approve_all_button
from bot.slack.deps import SlackDeps
from bot.slack.identity import SlackPerson
from bot.slack.linking import link_prompt
from bot.slack.mrkdwn import escape
from plumbing.periods import NOUNS, local_day
from timebot import l10n
from timebot.errors import TimebotError
from timebot.l10n.loading import load_localisation
from timebot.notify.periods import week_of
from timebot.timeentry.balances import balance_text, balances_of, day_bounds

log = structlog.get_logger("timebot.slack.home")
_UTC = ZoneInfo("UTC")

HOME_QUERY = """
query Home($person: SvcId!, $start: SvcTimestamp!, $end: SvcTimestamp!,
           $today: SvcTimestamp!, $tomorrow: SvcTimestamp!) {
  getTimeRecords(startTime: $start, endTime: $end, filter: [{personId: $person}]) {
    duration startTime { ts }
  }
  getApprovalState(personId: $person, startTime: $start, endTime: $end) { status }
  getPendingApprovals {
    person { id name } startTime { ts } endTime { ts } currentStage submitId totalDuration
  }
  getAbsenceQuotaReport(startTime: $today, endTime: $tomorrow, filters: [{personId: $person}]) {
    quotas { quotaId absenceTypeId startTime { ts } endTime { ts } available
             accruedCorrection consumed }
    absenceTypes { id name unit }
  }
  getAvailableAbsenceTypes(personId: $person) { id }
}"""

# An extension of the embedded service (work schedules and holidays), sent only where offered.
EXPECTED_EXTENSION = """
query HomeExpected($person: SvcId!, $start: SvcTimestamp!, $end: SvcTimestamp!) {
  getPerson(id: $person) { expectedTime(startTime: $start, endTime: $end) }
}"""

STATUS_TEXT = {"draft": l10n.N_("Draft (not submitted)"),
               "submitted": l10n.N_("Submitted, waiting for approval"),
               "approved": l10n.N_("Approved"),
               "rejected": l10n.N_("Rejected: correct it and submit again")}


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def by_day(records: list[dict[str, Any]], start_ms: int, end_ms: int,
           zone: ZoneInfo = _UTC) -> list[tuple[date, int]]:
    """Hours by day of the period, the days counted in `zone` (the period's)."""
    totals: dict[date, int] = defaultdict(int)
    for record in records:
        ts = int(((record.get("startTime") or {}).get("ts")) or 0)
        totals[local_day(ts, zone)] += int(record.get("duration") or 0)
    first, last = local_day(start_ms, zone), local_day(max(start_ms, end_ms - 1), zone)
    return [(first + timedelta(days=i), totals.get(first + timedelta(days=i), 0))
            for i in range((last - first).days + 1)]


def usable_report(report: dict[str, Any] | None, available: list[Any] | None
                  ) -> dict[str, Any] | None:
    """The quota report without the absence types the person may not use (pure); unfiltered
    when the service did not say which they may use."""
    if not report or available is None:
        return report
    usable = {item["id"] for item in available if item}
    quotas = [q for q in report.get("quotas") or [] if q and q.get("absenceTypeId") in usable]
    return {**report, "quotas": quotas}


def _title(noun: str, period: str) -> str:
    """The Home's heading: the person's period (their `periodicity`), in their language."""
    _ = l10n._
    if noun == "month":
        return _("This month ({period})").format(period=period)
    if noun == "fortnight":
        return _("This fortnight ({period})").format(period=period)
    if noun == "half-month":
        return _("This half-month ({period})").format(period=period)
    if noun == "day":
        return _("Today ({period})").format(period=period)
    return _("This week ({period})").format(period=period)


def home_view(
    person: SlackPerson, days: list[tuple[date, int]], status: str | None,
    pending: list[tuple[Request, str, str]], start_ms: int, end_ms: int,
    time_off: list[str] | None = None, expected_ms: int | None = None,
    noun: str = "week", zone: ZoneInfo = _UTC,
) -> dict[str, Any]:
    # In the person's language and formats (`l10n.using` around the call; English default)
    local, _ = l10n.current(), l10n._
    hours = partial(l10n.format_duration, local=local)
    total = sum(ms for _day, ms in days)
    lines = "\n".join(f"{l10n.format_day(day, local)}: {hours(ms)}" for day, ms in days)
    total_text = (_("Total {total} of {expected} expected").format(
        total=hours(total), expected=hours(expected_ms)) if expected_ms is not None
        else _("Total {total}").format(total=hours(total)))
    status_text = _(STATUS_TEXT[status or "draft"]) if (status or "draft") in STATUS_TEXT \
        else status or _("Draft")
    period = period_text(start_ms, end_ms, zone)  # in the language in force
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": _title(noun, period)}},
        {"type": "section", "text": {"type": "mrkdwn", "text": f"{lines}\n*{total_text}*"}},
        {"type": "section", "text": {"type": "mrkdwn", "text": (
            _("*Timesheet:* {status}").format(status=status_text))}},
    ]
    if time_off:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": (
            _("*Time off:* {balances}").format(
                balances="; ".join(escape(line) for line in time_off)))}})
    if pending:
        blocks.append({"type": "divider"})
        blocks.append({"type": "header", "text": {"type": "plain_text", "text": _(
            "Waiting for you ({count})").format(count=len(pending))}})
        # Slack takes 100 blocks: two per request, and "Approve all" names exactly those shown
        shown = pending[:min(40, (100 - len(blocks) - 1) // 2)]
        blocks.extend(pending_blocks(shown))
        if len(shown) > 1:
            blocks.append(approve_all_button([request for request, _name, _total in shown]))
    return {"type": "home", "blocks": blocks[:100]}


class HomePart:
    def __init__(self, deps: SlackDeps) -> None:
        self.deps = deps

    async def on_opened(self, event: dict[str, Any]) -> None:
        if event.get("tab") not in (None, "home"):
            return
        user = str(event.get("user", ""))
        try:
            person = await self.deps.identity.resolve(user)
        except NotIdentified as refusal:  # show how to link, in the tab
            await self.deps.web.views_publish(user_id=user, view={
                "type": "home", "blocks": link_prompt(refusal.message, refusal.can_link)})
            return
        try:
            await self.publish(person)
        except TimebotError as error:
            log.warning("home_failed", user=user, error=str(error))

    async def publish(self, person: SlackPerson) -> None:
        now = self.deps.runtime.clock.now_ms()
        # The person's period (their periodicity, in their service time zone), else UTC weeks.
        rules = await self.deps.runtime.entry_rules.rules(person.organisation_id,
                                                          person.person_id, person.apikey)
        start, end = week_of(now) if rules is None else rules.period(now)
        period_zone = _UTC if rules is None else rules.zone
        noun = "week" if rules is None else NOUNS[rules.periodicity]
        zone = _zone(person.tz)
        today, tomorrow = day_bounds(now, now, zone)
        data = await self.deps.runtime.client.execute(
            HOME_QUERY, {"person": person.person_id, "start": start, "end": end,
                         "today": today, "tomorrow": tomorrow},
            apikey=person.apikey, allow_partial=True)
        expected = await self._expected(person, start, end)
        local = await load_localisation(self.deps.runtime.client, person.apikey,
                                        person.person_id)
        with l10n.using(local):  # every figure and date in the person's formats
            pending: list[tuple[Request, str, str]] = []
            for item in data.get("getPendingApprovals") or []:
                if not item or not item.get("submitId"):
                    continue
                request = Request(
                    str(item["submitId"]), int(item.get("currentStage") or 0), "",
                    str(item["person"]["id"]), int(item["startTime"]["ts"]),
                    int(item["endTime"]["ts"]))
                pending.append((request, str(item["person"]["name"]), l10n.format_duration(
                    int(item.get("totalDuration") or 0), local)))
            status = status_word((data.get("getApprovalState") or {}).get("status"))
            time_off = [balance_text(balance, zone)
                        for balance in balances_of(usable_report(
                            data.get("getAbsenceQuotaReport"),
                            data.get("getAvailableAbsenceTypes")))]
            view = home_view(person, by_day(list(data.get("getTimeRecords") or []), start, end,
                                            period_zone),
                             status, pending, start, end, time_off, expected, noun, period_zone)
        await self.deps.web.views_publish(user_id=person.slack_user_id, view=view)

    async def _expected(self, person: SlackPerson, start: int, end: int) -> int | None:
        """The hours the person's schedule expects this week (holidays off), where the service
        knows schedules."""
        client = self.deps.runtime.client
        if not await client.offers("SvcPerson", "expectedTime", apikey=person.apikey):
            return None
        data = await client.execute(
            EXPECTED_EXTENSION, {"person": person.person_id, "start": start, "end": end},
            apikey=person.apikey, allow_partial=True)
        value = (data.get("getPerson") or {}).get("expectedTime")
        return int(value) if isinstance(value, int) else None


def register(app: AsyncApp, deps: SlackDeps) -> HomePart:
    part = HomePart(deps)
    app.event("app_home_opened")(part.on_opened)
    return part
