"""A due saved report by e-mail (timebot/notify/due_reports.py decides): one message per
address to notify, queued in the outbox under the occurrence's key for that address (in the owner's
localisation: the figures as they see them), so a
second tick, a restart or a second process never queues it twice."""

from __future__ import annotations

import structlog

from mail.outbound.reviews import MailContext, build_message
from timebot.l10n import format_hours
from timebot.notify.approvals import period_label, time_zone_of
from timebot.notify.due_reports import DueReport

log = structlog.get_logger("mail.report")


async def send_due_report(ctx: MailContext, due: DueReport) -> int:
    """Queues the report's e-mails; returns how many were new."""
    settings = ctx.runtime.settings
    queued = 0
    for address in due.emails:
        local = due.localisation
        rendered = ctx.templates.mail(
            "report", local, report_name=due.name, owner_name=due.owner.get("name") or "",
            period=period_label(due.occurrence.start_ms, due.occurrence.end_ms,
                                time_zone_of(due.owner), local),
            rows=[(label, format_hours(hours, local)) for label, hours in due.rows],
            total=format_hours(due.total_hours, local),
            link=due.link(settings.public_url),
        )
        message = build_message(settings, rendered, to=address)
        if await ctx.mail.outbox.enqueue(message, kind="report",
                                         envelope_from=settings.mail_from,
                                         dedupe_key=due.dedupe_key(address)):
            queued += 1
    if queued:
        ctx.mail.outbox_worker.wake()
        log.info("report_queued", report=due.report_id, occurrence=due.occurrence.key,
                 messages=queued)
    return queued
