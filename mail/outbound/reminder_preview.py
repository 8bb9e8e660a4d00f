"""What the operator's `timebot reminders preview` and `send` see: for one organisation at one
instant, the end-of-period reminders, daily digests, approval reminders and what climbs
(escalations to the administrators, climbing reminders to managers) and saved reports'
schedules that would go out (to whom, when) and, for everyone else, why not. The verdicts
are the senders' own decisions (`timebot.notify.period_reminders`, `mail.outbound.digest`,
`mail.outbound.reminders`, `timebot.notify.due_reports`); a preview writes
nothing, `send_due` queues what is due exactly as the scheduler's tick would (each once)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import func, select

from mail.outbound.digest import digest_person_ids, digest_plan, send_digests
from mail.outbound.reviews import MailContext, already_queued, queued_among
from timebot.notify.approvals import DIGEST, person_info, preference, setting_of
from timebot.notify.away_facts import away_facts, away_now
from timebot.notify.due_reports import occurrence_key, scheduled_reports
from timebot.notify.escalation_tick import AWAY, PENDING, SUBMITTED_AT, Escalator
from timebot.notify.escalations import climb_key, escalation_key
from timebot.notify.period_reminders import period_verdicts
from timebot.notify.period_timing import noun_of
from timebot.notify.report_schedule import next_occurrence
from timebot.notify.review_dispatch import ReviewDispatch
from timebot.notify.scheduler import Scheduler
from timebot.notify.scheduler_epoch import recorded_first_seen_ms
from timebot.state.away import Absence
from timebot.state.models import ApprovalReminderTally

DAY_MS = 86_400_000



@dataclass(frozen=True)
class PreviewLine:
    kind: str  # "period reminder", "digest", "approval reminder"
    to: str  # "Name <address>"
    verdict: str  # "due now" or why not
    about: str = ""  # the period or the timesheet

    def render(self) -> str:
        about = f" [{self.about}]" if self.about else ""
        return f"{self.kind:<18} {self.to:<40} {self.verdict}{about}"


def _to(person: dict[str, Any] | None, fallback: str = "?") -> str:
    if not person:
        return fallback
    email = person.get("email")
    return f"{person.get('name')} <{email}>" if email else str(person.get("name") or fallback)


def _day(ms: int, zone: str = "UTC") -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).astimezone(ZoneInfo(zone)).strftime(
        "%a %d %b %Y %H:%M %Z"
    )


def next_mailed_ordinal(received: int) -> int:
    """Pure: the ordinal of the next approval reminder that is mailed (a triangular number,
    as `mail.outbound.reminders.reminder_is_sent`) after `received` reminders of a stage."""
    n = 1
    while n * (n + 1) // 2 <= received:
        n += 1
    return n * (n + 1) // 2


def away_note(recorded: list[Absence], now_ms: int) -> str:
    """Pure: "; away until Wed 02 Dec 2026 (auto-reply)" for an approver away at `now_ms`
    (the latest return date of the sources that say so), else ""."""
    current = [absence for absence in recorded if away_now(absence, now_ms)]
    if not current:
        return ""
    sources = ", ".join(sorted({absence.source for absence in current}))
    if any(absence.until is None for absence in current):
        return f"; away, return unknown ({sources})"
    until = max(absence.until for absence in current if absence.until is not None)
    return f"; away until {until.strftime('%a %d %b %Y')} ({sources})"


async def preview(ctx: MailContext, organisation_id: str) -> list[PreviewLine]:
    lines: list[PreviewLine] = []
    runtime = ctx.runtime
    since = await recorded_first_seen_ms(runtime, organisation_id)
    verdicts = period_verdicts(
        runtime, organisation_id, lambda keys: queued_among(runtime, keys),
        runtime.clock.now_ms() if since is None else since, explain=True,
    )
    async for verdict in verdicts:
        about = "" if verdict.period is None else \
            f"{noun_of(verdict.person)} from {_day(verdict.period.start_ms)}"
        lines.append(PreviewLine("period reminder", _to(verdict.person),
                                 "due now" if verdict.reminder else verdict.why_not, about))
    for org_id, person_id in await digest_person_ids(runtime, organisation_id):
        plan = await digest_plan(ctx, org_id, person_id)
        lines.append(PreviewLine("digest", _to(plan.person, person_id),
                                 plan.why_not or f"due now: {len(plan.items)} waiting"))
    lines.extend(await approval_reminder_lines(ctx, organisation_id))
    lines.extend(await escalation_lines(ctx, organisation_id))
    lines.extend(await report_lines(ctx, organisation_id))
    return lines


async def report_lines(ctx: MailContext, organisation_id: str) -> list[PreviewLine]:
    """Each scheduled saved report (recurrence on, or addresses to notify): to each address,
    "due now", "sent" or when it goes next, with the figures' days, in the owner's zone. The
    report is not run (a run writes in the service)."""
    runtime = ctx.runtime
    now_ms = runtime.clock.now_ms()
    lines: list[PreviewLine] = []
    for report in await scheduled_reports(runtime, organisation_id):
        if not report.enabled and not report.emails:
            continue
        due = report.due(now_ms)
        zone = report.zone
        if not report.enabled or report.recurrence is None or not report.owner.get("id"):
            why = ("its recurrence is off" if not report.enabled else
                   "its recurrence is one timebot does not know" if report.recurrence is None
                   else "its folder has no owner")
            lines.extend(PreviewLine("report", to, f"not sent: {why}", report.name)
                         for to in report.emails or ("(nobody)",))
            continue
        occurrence = due or next_occurrence(report.report_id, report.recurrence, now_ms, zone)
        about = (f"{report.name}, figures {_day(occurrence.start_ms, zone.key)} to "
                 f"{_day(occurrence.end_ms, zone.key)}")
        if not report.emails:
            lines.append(PreviewLine("report", "(nobody)", "not sent: no address to notify",
                                     about))
        for address in report.emails:
            if due is None:
                verdict = f"next {_day(occurrence.send_ms, zone.key)}"
            elif await already_queued(runtime, occurrence_key(due, address)):
                verdict = "sent"
            else:
                verdict = "due now"
            lines.append(PreviewLine("report", address, verdict, about))
    return lines


async def escalation_lines(ctx: MailContext, organisation_id: str) -> list[PreviewLine]:
    """What climbs and when (timebot.notify.escalation_tick's plans): the administrators asked
    about a stage whose approvers are away, the managers asked about a stage that waited twice
    the approval-reminder interval; each recipient's line says when, or that it was sent."""
    runtime = ctx.runtime
    escalator = Escalator(runtime, ReviewDispatch(runtime))
    now_ms = runtime.clock.now_ms()
    lines: list[PreviewLine] = []
    for plan in await escalator.plans(organisation_id):
        if plan.kind == AWAY:
            continue
        about = f"{plan.wait.owner_name}, stage {plan.wait.stage + 1}"
        when = "due now" if plan.due_ms <= now_ms else f"from {_day(plan.due_ms)}"
        for pid, name in plan.recipients:
            key = (escalation_key(plan.wait.submit_id, plan.wait.stage, pid) if not plan.about
                   else climb_key(plan.wait.submit_id, plan.wait.stage, plan.about, pid))
            verdict = "sent" if await already_queued(runtime, key) else when
            lines.append(PreviewLine(plan.kind, name, f"{verdict}: {plan.reason}", about))
    return lines


async def _stage_entered(ctx: MailContext, key: str, entry: dict[str, Any]) -> int | None:
    """When the timesheet entered its current stage: the last approval of an earlier stage,
    else its submission."""
    stage = int(entry.get("currentStage") or 0)
    earlier = [int(a["ts"]) for detail in entry.get("stageDetails") or [] if detail
               and int(detail["stage"]) < stage for a in detail.get("approvedBy") or [] if a]
    if earlier:
        return max(earlier)
    data = await ctx.runtime.client.execute(SUBMITTED_AT, {"id": entry["submitId"]}, apikey=key)
    event = data.get("getApprovalEventById") or {}
    return int(event["ts"]["ts"]) if event.get("ts") else None


async def approval_reminder_lines(ctx: MailContext, organisation_id: str) -> list[PreviewLine]:
    """Each pending approver of each waiting timesheet: when the next reminder mail goes
    (the service reminds every N days of the owner's `approvalReminder`; mail goes on the
    1st, 3rd, 6th… of those)."""
    runtime = ctx.runtime
    key = await runtime.directory.integration_key(organisation_id)
    pending = (await runtime.client.execute(PENDING, apikey=key)).get("getPendingApprovals") or []
    lines: list[PreviewLine] = []
    ids = sorted({str(p["id"]) for entry in pending if entry for d in entry.get("stageDetails")
                  or [] if d and int(d["stage"]) == int(entry.get("currentStage") or 0)
                  for p in d.get("pending") or [] if p})
    away = await away_facts(runtime, key, organisation_id, ids)
    now_ms = runtime.clock.now_ms()
    for entry in pending:
        if not entry or entry.get("status") != "s" or not entry.get("submitId"):
            continue
        stage = int(entry.get("currentStage") or 0)
        about = f"{entry['person']['name']}, stage {stage + 1}"
        owner = await person_info(runtime.client, key, entry["person"]["id"]) or {}
        every = setting_of(owner, "approvalReminder")
        approvers = [p for d in entry.get("stageDetails") or [] if d and int(d["stage"]) == stage
                     for p in d.get("pending") or [] if p]
        if not every:
            verdict = "no approval reminders (approvalReminder is off)"
        else:
            async with runtime.state_sessions() as session:
                received = int(await session.scalar(
                    select(func.count()).select_from(ApprovalReminderTally).where(
                        ApprovalReminderTally.submit_id == entry["submitId"],
                        ApprovalReminderTally.stage == stage,
                    )
                ) or 0)
            ordinal = next_mailed_ordinal(received)
            entered = await _stage_entered(ctx, key, entry)
            verdict = "waiting stage unknown" if entered is None else (
                f"next reminder mail {_day(entered + ordinal * every * DAY_MS)} "
                f"(reminder {ordinal}, every {every} days)"
            )
        for approver in approvers:
            mode = await preference(runtime, organisation_id, approver["id"])
            line = "the daily digest lists it" if mode == DIGEST else verdict
            line += away_note(away.get(approver["id"], []), now_ms)
            info = await person_info(runtime.client, key, approver["id"])
            lines.append(PreviewLine("approval reminder", _to(info, approver.get("name", "?")),
                                     line, about))
    return lines


async def send_due(ctx: MailContext, scheduler: Scheduler, organisation_id: str
                   ) -> tuple[int, int]:
    """Queue the period reminders, digests and saved reports due now in one organisation,
    each once (the same dedupe keys as the scheduler's tick: a running timebot sends nothing
    twice); (reminders and digests, report mails)."""
    sent = await scheduler.period_reminders(organisation_id)
    sent += await send_digests(ctx, organisation_id)
    return sent, await scheduler.due_reports(organisation_id)
