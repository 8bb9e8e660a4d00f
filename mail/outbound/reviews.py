"""Review requests by e-mail: when a timesheet reaches a stage, every pending approver of that
stage gets one e-mail (or, if they chose the digest, the next daily digest lists it).

The ground decides who is asked (`timebot.notify.reviews`) and mail's channel
(`mail.outbound.channel.MailChannel`) hands each request here: `send_approver_mail` renders it — the
period's summary, one-click Approve / Reject links, Reply-To `approvals+<token>@<mail domain>` and a
Message-ID of ours — and enqueues it in the outbox under the request's dedupe key (submit
event, stage, approver), so each request goes out once however many times the event is
dispatched and however many processes run.

The pure parts (links, message composition) sit beside the outbox adapters.
"""

from __future__ import annotations

from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any

import structlog
from sqlalchemy import select

from mail.outbound.custom_mail import chosen, person_values
from mail.outbound.templating import MailTemplates, RenderedMail
from mail.queues.outbox import new_message
from mail.queues.parts import MailParts
from timebot.config import Settings
from timebot.l10n import format_duration, localisation_of
from timebot.notify.approvals import period_label, preference
from timebot.notify.person_notify import EMAIL, gets
from timebot.notify.review_reads import approver_reads
from timebot.process.runtime import Runtime
from timebot.secret_key.tokens import PeriodHint, make_token, message_id, reply_address
from timebot.state.dedupe_keys import present_keys
from timebot.state.models import OutboxMessage
from timebot.summary import TimesheetSummary

log = structlog.get_logger("mail.reviews")

DAY_MS = 86_400_000
LINK_TTL_MS = 14 * DAY_MS
REPLY_TTL_MS = 30 * DAY_MS
# The e-mail template kind (`emailTemplates`) of each approver mail.
TEMPLATE_KINDS = {"review_request": "timesheetSubmitted", "approval_reminder": "approvalReminder"}


# --- pure helpers ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ReviewLinks:
    approve_url: str
    reject_url: str
    reply_token: str


def review_links(
    settings: Settings, submit_id: str, approver_id: str, stage: int, now_ms: int
) -> ReviewLinks:
    secret = settings.secret_key

    def token(purpose: Any, ttl: int) -> str:
        return make_token(secret, purpose, event_id=submit_id, approver_id=approver_id,
                          stage=stage, expires_at_ms=now_ms + ttl)

    base = settings.public_url.rstrip("/")
    return ReviewLinks(
        approve_url=f"{base}/a/{token('approve-link', LINK_TTL_MS)}",
        reject_url=f"{base}/r/{token('reject-link', LINK_TTL_MS)}",
        reply_token=token("reply", REPLY_TTL_MS),
    )


def prefs_url(settings: Settings, organisation_id: str, person_id: str, now_ms: int) -> str:
    token = make_token(settings.secret_key, "prefs-link", event_id=organisation_id,
                       approver_id=person_id, stage=0, expires_at_ms=now_ms + 365 * DAY_MS)
    return f"{settings.public_url.rstrip('/')}/prefs/{token}"


def build_message(
    settings: Settings,
    rendered: RenderedMail,
    *,
    to: str,
    reply_token: str | None = None,
    auto_submitted: str = "auto-generated",
    hint: PeriodHint | None = None,
) -> EmailMessage:
    """Our message: From TIMEBOT_MAIL_FROM; with a reply token, Reply-To the approvals address
    and a Message-ID that carries the token (and `hint`: the timesheet's owner and period,
    which saves the reply a read)."""
    domain = settings.mail_domain
    headers = {"Auto-Submitted": auto_submitted}
    if reply_token is not None:
        headers["Reply-To"] = reply_address(reply_token, domain)
    return new_message(
        mail_from=settings.mail_from, to=to, subject=rendered.subject, text=rendered.text,
        html=rendered.html, mail_domain=domain,
        message_id=message_id(reply_token, domain, hint=hint) if reply_token is not None else None,
        headers=headers,
    )


# --- adapters -------------------------------------------------------------------------------


@dataclass(frozen=True)
class MailContext:
    """What the review, reminder and digest mail needs: the runtime, the templates and the
    outbox."""

    runtime: Runtime
    templates: MailTemplates
    mail: MailParts


async def already_queued(runtime: Runtime, dedupe_key: str) -> bool:
    """Whether a mail with that key was queued: a read, beside the writers (SQLite: not a
    BEGIN IMMEDIATE behind them, for every reminder and review of a fan-out, issue #40). The
    insert with the key decides all the same (ON CONFLICT DO NOTHING)."""
    async with runtime.read_sessions() as session:
        found = await session.scalar(
            select(OutboxMessage.id).where(OutboxMessage.dedupe_key == dedupe_key)
        )
        return found is not None


async def queued_among(runtime: Runtime, dedupe_keys: list[str]) -> set[str]:
    """The keys of `dedupe_keys` with a mail queued (`already_queued` of many)."""
    async with runtime.read_sessions() as session:
        return await present_keys(session, OutboxMessage.dedupe_key, dedupe_keys)


async def send_approver_mail(
    ctx: MailContext,
    *,
    template: str,
    organisation_id: str,
    submit_id: str,
    stage: int,
    stage_count: int,
    approver_id: str,
    summary: TimesheetSummary,
    dedupe_key: str,
    kind: str,
    extra: dict[str, Any] | None = None,
) -> bool:
    """Render and enqueue one review request / approval reminder to an approver; False when
    it was queued before (or the approver has no address)."""
    runtime = ctx.runtime
    settings = runtime.settings
    key = await runtime.directory.integration_key(organisation_id)
    approver, notify = await approver_reads(runtime.client, key, approver_id)
    if approver is None or not approver.get("email") or approver.get("archived"):
        return False
    if not gets(notify.settings, "review", EMAIL):
        return False  # they turned these mails off (notificationSettings)
    now = runtime.clock.now_ms()
    links = review_links(settings, submit_id, approver_id, stage, now)
    mode = await preference(runtime, organisation_id, approver_id)
    local = localisation_of(approver)  # the approver's language and formats
    builtin = ctx.templates.mail(
        template,
        local,
        approver_name=approver["name"],
        summary=summary,
        period=period_label(summary.start_ms, summary.end_ms, summary.time_zone, local),
        stage=stage,
        stage_count=stage_count,
        approve_url=links.approve_url,
        reject_url=links.reject_url,
        reply_address=reply_address(links.reply_token, settings.mail_domain),
        prefs_url=prefs_url(settings, organisation_id, approver_id, now),
        mode=mode,
        **(extra or {}),
    )
    period = period_label(summary.start_ms, summary.end_ms, summary.time_zone, local)
    rendered = chosen(notify, TEMPLATE_KINDS.get(template, template), {
        "person": person_values(approver), "owner": summary.person_name, "period": period,
        "total": format_duration(summary.total_ms, local), "stage": stage,
        "stage_count": stage_count,
        "approve_url": links.approve_url, "reject_url": links.reject_url,
        "days": (extra or {}).get("waiting_days")}, builtin, organisation=organisation_id)
    message = build_message(settings, rendered, to=str(approver["email"]),
                            reply_token=links.reply_token,
                            hint=PeriodHint(summary.person_id, summary.start_ms, summary.end_ms))
    queued: bool = await ctx.mail.outbox.enqueue(
        message, kind=kind, envelope_from=settings.mail_from, dedupe_key=dedupe_key
    )
    if queued:
        ctx.mail.outbox_worker.wake()
        log.debug("approver_mail_queued", kind=kind, submit=submit_id, stage=stage,
                 approver=approver_id)
    return queued

