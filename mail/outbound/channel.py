"""Mail as a channel of the ground's notifications (`timebot.notify.decisions.ReviewChannel`
and `Channel`): a review request becomes the review e-mail (unless the approver reads the
digest), a period reminder the timesheet-reminder e-mail, the daily digests are mail's, and
what was sent is what the outbox holds under the notification's dedupe key."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

from mail.outbound.digest import send_digests
from mail.outbound.reminders import send_timesheet_reminder
from mail.outbound.report_mail import send_due_report
from mail.outbound.reviews import (
    MailContext,
    already_queued,
    queued_among,
    send_approver_mail,
)
from timebot.notify.decisions import PeriodReminder, ReviewRequest
from timebot.notify.due_reports import DueReport


class MailChannel:
    def __init__(self, ctx: MailContext) -> None:
        self.ctx = ctx

    async def already_sent(self, dedupe_key: str) -> bool:
        return await already_queued(self.ctx.runtime, dedupe_key)

    async def sent_among(self, dedupe_keys: list[str]) -> set[str]:
        return await queued_among(self.ctx.runtime, dedupe_keys)

    async def review_request(self, request: ReviewRequest) -> bool:
        """Mail the request; False when it was queued before, or the approver reads the
        digest (the next daily digest lists it) or has no address."""
        if request.digest:
            return False
        return await send_approver_mail(
            self.ctx,
            template="review_request",
            organisation_id=request.organisation_id,
            submit_id=request.submit_id,
            stage=request.stage,
            stage_count=request.stage_count,
            approver_id=request.approver_id,
            summary=request.summary,
            dedupe_key=request.dedupe_key,
            kind="review",
            extra={"reason": request.reason},
        )

    async def due_report(self, due: DueReport) -> int:
        return await send_due_report(self.ctx, due)

    def bulk(self) -> AbstractAsyncContextManager[object]:
        """The run's reminder mails written BATCH_ROWS a transaction (Outbox.batched)."""
        return self.ctx.mail.outbox.batched(self.ctx.mail.outbox_worker.wake)

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
            reads=reminder.reads,
        )

    async def daily_digests(self) -> int:
        return await send_digests(self.ctx)
