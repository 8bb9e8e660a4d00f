"""Mail as a channel of the ground's scheduler (`timebot.notify.decisions.Channel`): a period
reminder becomes the timesheet-reminder e-mail, the daily digests are mail's, and what was
sent is what the outbox holds under the notification's dedupe key."""

from __future__ import annotations

from mail.digest import send_digests
from mail.reminders import send_timesheet_reminder
from mail.reviews import MailContext, already_queued
from timebot.notify.decisions import PeriodReminder


class MailChannel:
    def __init__(self, ctx: MailContext) -> None:
        self.ctx = ctx

    async def already_sent(self, dedupe_key: str) -> bool:
        return await already_queued(self.ctx.runtime, dedupe_key)

    async def period_reminder(self, reminder: PeriodReminder) -> bool:
        return await send_timesheet_reminder(
            self.ctx,
            organisation_id=reminder.organisation_id,
            person=reminder.person,
            start_ms=reminder.period.start_ms,
            end_ms=reminder.period.end_ms,
            status=reminder.status,
            entries=reminder.entries,
            total_ms=reminder.total_ms,
            dedupe_key=reminder.dedupe_key,
        )

    async def daily_digests(self) -> int:
        return await send_digests(self.ctx)
