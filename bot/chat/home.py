"""The Home view's content, platform-neutral: this period's hours by day (against what the
schedule expects, where the service knows schedules), the timesheet's status, the time off
left (allowances, as of today) and, for approvers, what waits for them with Approve / Reject
and "Approve all (N)".

`read_home(runtime, person)` reads it as the person (own key): `HomeFacts`, with the person's
localisation; `home_content(facts, markup)`, in force (`with l10n.using(facts.local)`), words
it: `HomeContent` (title, hours, status, time off, the waiting list's title). An adapter
renders it (Slack: the App Home tab, bot.slack.home; Teams: a personal tab or a card) and adds
the waiting list's actions (approvals.waiting_blocks, approve_all.approve_all_block) within
its own room.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, timedelta
from functools import partial
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from bot.chat.approvals import Request, period_text, status_word
from bot.chat.markup import Markup
from bot.chat.person import ChatPerson, zone_of
from plumbing.periods import NOUNS, local_day
from timebot import l10n
from timebot.l10n.loading import load_localisation
from timebot.notify.periods import week_of
from timebot.timeentry.balances import balance_text, balances_of, day_bounds

if TYPE_CHECKING:
    from timebot.runtime import Runtime

UTC_ZONE = ZoneInfo("UTC")

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


def by_day(records: list[dict[str, Any]], start_ms: int, end_ms: int,
           zone: ZoneInfo = UTC_ZONE) -> list[tuple[date, int]]:
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


def title(noun: str, period: str) -> str:
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


@dataclass(frozen=True)
class HomeFacts:
    """What the Home shows, read as the person; `local`: their language and formats."""

    local: l10n.Localisation
    days: list[tuple[date, int]]
    status: str | None
    pending: list[tuple[Request, str, str]]  # request, its person's name, its total (words)
    start_ms: int
    end_ms: int
    time_off: list[str]
    expected_ms: int | None
    noun: str
    zone: ZoneInfo


@dataclass(frozen=True)
class HomeContent:
    """The Home in words (chat markup): its title, the hours by day and their total, the
    timesheet's status, the time off left (None: none), the waiting list's title (None:
    nothing waits) and the waiting requests."""

    title: str
    hours: str
    status: str
    time_off: str | None
    waiting_title: str | None
    pending: list[tuple[Request, str, str]]


def home_content(facts: HomeFacts, markup: Markup) -> HomeContent:
    """The Home in the language in force (`l10n.using(facts.local)` around the call)."""
    local, _ = l10n.current(), l10n._
    hours = partial(l10n.format_duration, local=local)
    total = sum(ms for _day, ms in facts.days)
    lines = "\n".join(f"{l10n.format_day(day, local)}: {hours(ms)}" for day, ms in facts.days)
    total_text = (_("Total {total} of {expected} expected").format(
        total=hours(total), expected=hours(facts.expected_ms)) if facts.expected_ms is not None
        else _("Total {total}").format(total=hours(total)))
    status = facts.status or "draft"
    status_text = _(STATUS_TEXT[status]) if status in STATUS_TEXT \
        else facts.status or _("Draft")
    period = period_text(facts.start_ms, facts.end_ms, facts.zone)
    time_off = _("*Time off:* {balances}").format(
        balances="; ".join(markup.escape(line) for line in facts.time_off)) \
        if facts.time_off else None
    waiting = _("Waiting for you ({count})").format(count=len(facts.pending)) \
        if facts.pending else None
    return HomeContent(title(facts.noun, period), f"{lines}\n*{total_text}*",
                       _("*Timesheet:* {status}").format(status=status_text), time_off,
                       waiting, facts.pending)


async def read_home(runtime: Runtime, person: ChatPerson) -> HomeFacts:
    """The Home's facts, read as the person: their period (their periodicity, in their
    service time zone, else UTC weeks), its records, status, their time off and what waits
    for them."""
    now = runtime.clock.now_ms()
    rules = await runtime.entry_rules.rules(person.organisation_id, person.person_id,
                                            person.apikey)
    start, end = week_of(now) if rules is None else rules.period(now)
    period_zone = UTC_ZONE if rules is None else rules.zone
    noun = "week" if rules is None else NOUNS[rules.periodicity]
    zone = zone_of(person)
    today, tomorrow = day_bounds(now, now, zone)
    data = await runtime.client.execute(
        HOME_QUERY, {"person": person.person_id, "start": start, "end": end,
                     "today": today, "tomorrow": tomorrow},
        apikey=person.apikey, allow_partial=True)
    expected = await _expected(runtime, person, start, end)
    local = await load_localisation(runtime.client, person.apikey, person.person_id)
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
        time_off = [balance_text(balance, zone)
                    for balance in balances_of(usable_report(
                        data.get("getAbsenceQuotaReport"),
                        data.get("getAvailableAbsenceTypes")))]
    return HomeFacts(local, by_day(list(data.get("getTimeRecords") or []), start, end,
                                   period_zone),
                     status_word((data.get("getApprovalState") or {}).get("status")), pending,
                     start, end, time_off, expected, noun, period_zone)


async def _expected(runtime: Runtime, person: ChatPerson, start: int, end: int) -> int | None:
    """The hours the person's schedule expects this period (holidays off), where the service
    knows schedules."""
    client = runtime.client
    if not await client.offers("SvcPerson", "expectedTime", apikey=person.apikey):
        return None
    data = await client.execute(
        EXPECTED_EXTENSION, {"person": person.person_id, "start": start, "end": end},
        apikey=person.apikey, allow_partial=True)
    value = (data.get("getPerson") or {}).get("expectedTime")
    return int(value) if isinstance(value, int) else None
