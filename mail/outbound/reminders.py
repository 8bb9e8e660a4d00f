"""Reminders by e-mail.

- Approvers who have not acted: the service emits `approvalReminder` every N days (the
  approval-reminder setting, cascading account -> tag -> person) while a stage waits. The bot
  reminds at *increasing* intervals: on the 1st, 3rd, 6th, 10th… of those events for one
  submission's stage (after N, 3N, 6N, 10N days: gaps of 2N, 3N, 4N…), until someone acts.
  Each event is tallied once by its delivery id, so a redelivery or a second process counts
  nothing twice; the mail's dedupe key carries the ordinal.
- People with an unsubmitted period: `timesheetReminder` (sendTimesheetReminder, a one-off)
  and the scheduler's end-of-period reminders (timebot.notify.period_reminders decides who is
  due; mail/outbound/channel.py sends them here) share one message: a "Submit now" link when the
  period holds entries, the auto-submit date when it is on, and the automatic timesheet's
  pending suggested entries with their hours (timebot/notify/suggestions.py) when there are.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import structlog
from sqlalchemy import func, select

from mail.outbound.custom_mail import chosen, person_values
from mail.outbound.reviews import MailContext, build_message, send_approver_mail
from timebot.config import Settings
from timebot.events.bus import APPROVAL_REMINDER, TIMESHEET_REMINDER, ServiceEvent
from timebot.l10n import ENGLISH, Localisation, format_day, format_duration, localisation_of
from timebot.notify.approvals import (
    DIGEST,
    period_label,
    person_info,
    preference,
    setting_of,
    time_zone_of,
)
from timebot.notify.person_notify import EMAIL, gets
from timebot.notify.review_reads import submission_reads
from timebot.notify.suggestions import ReminderReads, notify_and_suggestions
from timebot.secret_key.tokens import make_token, pack_period
from timebot.state.db import insert_ignoring, unit_of_work
from timebot.state.models import ApprovalReminderTally

log = structlog.get_logger("mail.reminders")

DAY_MS = 86_400_000
SUBMIT_LINK_TTL_MS = 14 * DAY_MS


def reminder_is_sent(ordinal: int) -> bool:
    """Pure: the ordinal-th approvalReminder of a stage is mailed when it is a triangular
    number (1, 3, 6, 10, …): increasing intervals."""
    if ordinal < 1:
        return False
    root = math.isqrt(8 * ordinal + 1)
    return root * root == 8 * ordinal + 1


def submit_url(
    settings: Settings, person_id: str, start_ms: int, end_ms: int, now_ms: int
) -> str:
    token = make_token(
        settings.secret_key, "submit-link", event_id=pack_period(start_ms, end_ms),
        approver_id=person_id, stage=0, expires_at_ms=now_ms + SUBMIT_LINK_TTL_MS,
    )
    return f"{settings.public_url.rstrip('/')}/s/{token}"


def auto_submit_date(end_ms: int, days: int | None, time_zone: str,
                     local: Localisation = ENGLISH) -> str | None:
    """The day the service auto-submits the period: N local days after the local day its end
    falls on (service/timesheets/autosubmit.py), shown in the person's zone."""
    if not days:
        return None
    end_day = datetime.fromtimestamp(end_ms / 1000, UTC).astimezone(ZoneInfo(time_zone)).date()
    return format_day(end_day + timedelta(days=days), local, year=True)


# --- approval reminders ---------------------------------------------------------------------


async def _tally(ctx: MailContext, event: ServiceEvent, submit_id: str, stage: int) -> int:
    """Record this reminder event (once per delivery) and return its ordinal for the stage."""
    async with unit_of_work(ctx.runtime.state_sessions) as session:
        await session.execute(
            insert_ignoring(session, ApprovalReminderTally, ("delivery_id",)),
            {"delivery_id": event.delivery_id, "organisation_id": event.organisation_id,
             "submit_id": submit_id, "stage": stage, "timestamp_ms": event.timestamp_ms},
        )
        count = await session.scalar(
            select(func.count()).select_from(ApprovalReminderTally).where(
                ApprovalReminderTally.submit_id == submit_id,
                ApprovalReminderTally.stage == stage,
                ApprovalReminderTally.timestamp_ms <= event.timestamp_ms,
            )
        )
        return int(count or 0)


async def on_approval_reminder(ctx: MailContext, event: ServiceEvent) -> int:
    data = event.data
    submit_id, stage = data.get("submitId"), data.get("stage")
    if data.get("status") != "s" or not submit_id or not isinstance(stage, int):
        return 0
    ordinal = await _tally(ctx, event, submit_id, stage)
    if not reminder_is_sent(ordinal):
        log.info("approval_reminder_skipped", submit=submit_id, stage=stage, ordinal=ordinal)
        return 0
    runtime = ctx.runtime
    key = await runtime.directory.integration_key(event.organisation_id)
    reads = await submission_reads(runtime.client, key, submit_id)
    if reads is None or not reads[0].waits_at(submit_id, stage):
        return 0
    snapshot, summary = reads
    owner = await person_info(runtime.client, key, snapshot.person_id) or {}
    every = setting_of(owner, "approvalReminder") or 1
    wanted = {p.get("id") for p in data.get("pendingApprovers") or [] if p}
    sent = 0
    for approver_id, _name in snapshot.pending:
        if approver_id not in wanted:
            continue
        if await preference(runtime, event.organisation_id, approver_id) == DIGEST:
            continue  # the daily digest lists it every day anyway
        sent += await send_approver_mail(
            ctx,
            template="approval_reminder",
            organisation_id=event.organisation_id,
            submit_id=submit_id,
            stage=stage,
            stage_count=int(data.get("stageCount") or snapshot.stage_count or 1),
            approver_id=approver_id,
            summary=summary,
            dedupe_key=f"approval-reminder:{submit_id}:{stage}:{approver_id}:{ordinal}",
            kind="approval-reminder",
            extra={"waiting_days": ordinal * every},
        )
    return sent


# --- reminders of an unsubmitted period -----------------------------------------------------


async def send_timesheet_reminder(
    ctx: MailContext,
    *,
    organisation_id: str,
    person: dict[str, Any],
    start_ms: int,
    end_ms: int,
    status: str,
    entries: int,
    total_ms: int,
    dedupe_key: str,
    by_name: str | None = None,
    reads: ReminderReads | None = None,
) -> bool:
    """One reminder to submit a period; `person` as `timebot.notify.approvals.PERSON` reads
    it; `reads`: their notification settings and suggestions, when read already."""
    runtime = ctx.runtime
    settings = runtime.settings
    if not person.get("email"):
        return False
    if reads is None:
        key = await runtime.directory.integration_key(organisation_id)
        reads = await notify_and_suggestions(runtime.client, key, str(person["id"]), start_ms,
                                             end_ms)
    notify, pending = reads.notify, reads.pending
    if not gets(notify.settings, "reminder", EMAIL):
        return False  # they turned e-mail off (notificationSettings)
    zone = time_zone_of(person)
    now = runtime.clock.now_ms()
    local = localisation_of(person)
    builtin = ctx.templates.mail(
        "timesheet_reminder",
        local,
        person_name=person["name"],
        period=period_label(start_ms, end_ms, zone, local),
        status=status,
        entries=entries,
        total_ms=total_ms,
        by_name=by_name,
        suggested=pending.count,
        suggested_ms=pending.total_ms,
        submit_url=submit_url(settings, str(person["id"]), start_ms, end_ms, now)
        if entries else None,
        auto_submit_date=auto_submit_date(end_ms, setting_of(person, "autoSubmit"), zone, local)
        if entries else None,
    )
    rendered = chosen(notify, "reminder", {
        "person": person_values(person), "period": period_label(start_ms, end_ms, zone, local),
        "entries": entries, "total": format_duration(total_ms, local),
        "suggested": pending.count, "suggested_total": format_duration(pending.total_ms, local),
        "submit_url": submit_url(settings, str(person["id"]), start_ms, end_ms, now)
        if entries else None}, builtin, organisation=organisation_id)
    message = build_message(settings, rendered, to=str(person["email"]))
    queued: bool = await ctx.mail.outbox.enqueue(
        message, kind="timesheet-reminder", envelope_from=settings.mail_from,
        dedupe_key=dedupe_key,
    )
    if queued:
        ctx.mail.outbox_worker.wake()
        log.info("timesheet_reminder_queued", person=person["id"], start=start_ms)
    return queued


async def on_timesheet_reminder(ctx: MailContext, event: ServiceEvent) -> int:
    """sendTimesheetReminder: the service chose the people (not submitted); the same mail as
    the end-of-period reminder, once per delivery."""
    data = event.data
    person_id = (data.get("person") or {}).get("id")
    if not person_id or data.get("status") in ("s", "a"):
        return 0
    runtime = ctx.runtime
    key = await runtime.directory.integration_key(event.organisation_id)
    person = await person_info(runtime.client, key, str(person_id))
    if person is None:
        return 0
    return int(await send_timesheet_reminder(
        ctx,
        organisation_id=event.organisation_id,
        person=person,
        start_ms=int(data["startTime"]),
        end_ms=int(data["endTime"]),
        status=str(data.get("status") or "d"),
        entries=int(data.get("entries") or 0),
        total_ms=int(data.get("totalDuration") or 0),
        dedupe_key=f"timesheet-reminder:{event.delivery_id}:{person_id}",
        by_name=(data.get("by") or {}).get("name"),
    ))


class Reminders:
    """The bus subscriber for approvalReminder and timesheetReminder."""

    handles = (APPROVAL_REMINDER, TIMESHEET_REMINDER)

    def __init__(self, ctx: MailContext) -> None:
        self.ctx = ctx

    async def __call__(self, event: ServiceEvent) -> None:
        if event.event == APPROVAL_REMINDER:
            await on_approval_reminder(self.ctx, event)
        elif event.event == TIMESHEET_REMINDER:
            await on_timesheet_reminder(self.ctx, event)
