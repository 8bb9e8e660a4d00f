"""Review requests: when a timesheet reaches a stage, every pending approver of that stage gets
one e-mail (or, if they chose the digest, the next daily digest lists it).

A bus subscriber (timebot.events): on approvalEventUpdate with status "s" it checks the
current approval state first (a lagging event for a stage that has moved on, or a decided
timesheet, sends nothing), then enqueues per pending approver a message with the period's
summary, one-click Approve / Reject links, Reply-To `approvals+<token>@<mail domain>` and a
Message-ID of ours. The outbox's dedupe key (submit event, stage, approver) makes each request
go out once however many times the event is dispatched and however many processes run.

The pure parts (links, period labels, message composition) sit beside the thin adapters
(GraphQL look-ups, the preference table).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from typing import Any
from zoneinfo import ZoneInfo

import structlog
from sqlalchemy import select

from mail.outbound import new_message
from mail.parts import MailParts
from mail.templating import RenderedMail, Templates
from timebot.client import ServiceClient, operation
from timebot.config import Settings
from timebot.events import APPROVAL_UPDATE, ServiceEvent
from timebot.runtime import Runtime
from timebot.state.models import NotificationPreference, OutboxMessage
from timebot.summary import TimesheetSummary, load_summary
from timebot.tokens import make_token, message_id, reply_address

log = structlog.get_logger("mail.reviews")

DAY_MS = 86_400_000
LINK_TTL_MS = 14 * DAY_MS
REPLY_TTL_MS = 30 * DAY_MS
INSTANT = "instant"
DIGEST = "digest"
MODES = (INSTANT, DIGEST)

EVENT_PERIOD = operation(
    """query ReviewEvent($id: SvcId!) {
      getApprovalEventById(id: $id) { id submitId person { id } startTime { ts } endTime { ts } }
    }"""
)
APPROVAL_STATE = operation(
    """query ReviewState($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) {
      getApprovalState(personId: $p, startTime: $s, endTime: $e) {
        status currentStage submitId by { id name }
        pendingApprovers { id name }
        stageDetails { stage skipped approvedBy { person { id name } } }
      }
    }"""
)
PERSON = operation(
    """query ReviewPerson($id: SvcId!) {
      getPerson(id: $id) {
        id name email archived
        localisation { timeZone { value } }
        timeSettings { approvalReminder { value } }
      }
    }"""
)
# An extension of the embedded service, asked for only where the service offers it.
PERSON_AUTO_SUBMIT_EXTENSION = operation(
    """query ReviewPersonAutoSubmit($id: SvcId!) {
      getPerson(id: $id) { timeSettings { autoSubmit { value } } }
    }"""
)


# --- pure helpers ---------------------------------------------------------------------------


def period_label(start_ms: int, end_ms: int, time_zone: str = "UTC") -> str:
    """`Mon 02 Mar to Sun 08 Mar 2026` in the owner's time zone (end exclusive)."""
    zone = ZoneInfo(time_zone)
    first = datetime.fromtimestamp(start_ms / 1000, UTC).astimezone(zone).date()
    last = datetime.fromtimestamp(max(start_ms, end_ms - 1) / 1000, UTC).astimezone(zone).date()
    if first == last:
        return f"{first:%a %d %b %Y}"
    return f"{first:%a %d %b} to {last:%a %d %b %Y}"


def local_date(ms: int, time_zone: str) -> str:
    return f"{datetime.fromtimestamp(ms / 1000, UTC).astimezone(ZoneInfo(time_zone)):%a %d %b %Y}"


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


def review_dedupe_key(submit_id: str, stage: int, approver_id: str, round_mark: str = "") -> str:
    return f"review:{submit_id}:{stage}:{approver_id}{round_mark}"


def build_message(
    settings: Settings,
    rendered: RenderedMail,
    *,
    to: str,
    reply_token: str | None = None,
    auto_submitted: str = "auto-generated",
) -> EmailMessage:
    """Our message: From TIMEBOT_MAIL_FROM; with a reply token, Reply-To the approvals address
    and a Message-ID that carries the token."""
    domain = settings.mail_domain
    headers = {"Auto-Submitted": auto_submitted}
    if reply_token is not None:
        headers["Reply-To"] = reply_address(reply_token, domain)
    return new_message(
        mail_from=settings.mail_from, to=to, subject=rendered.subject, text=rendered.text,
        html=rendered.html, mail_domain=domain,
        message_id=message_id(reply_token, domain) if reply_token is not None else None,
        headers=headers,
    )


# --- adapters -------------------------------------------------------------------------------


@dataclass(frozen=True)
class MailContext:
    """What the review, reminder and digest mail needs: the runtime, the templates and the
    outbox."""

    runtime: Runtime
    templates: Templates
    mail: MailParts


@dataclass(frozen=True)
class ApprovalSnapshot:
    """The current approval state of the timesheet a submit event belongs to."""

    person_id: str
    start_ms: int
    end_ms: int
    status: str | None
    stage: int | None
    submit_id: str | None
    pending: tuple[tuple[str, str], ...]  # (id, name)
    stage_count: int
    approved_by: dict[int, tuple[str, ...]]  # stage -> names
    by_name: str | None

    def pending_ids(self) -> set[str]:
        return {pid for pid, _ in self.pending}


async def approval_snapshot(
    client: ServiceClient, key: str, submit_id: str
) -> ApprovalSnapshot | None:
    """None when the submit event is unknown."""
    event = (await client.execute(EVENT_PERIOD, {"id": submit_id}, apikey=key)).get(
        "getApprovalEventById"
    )
    if not event:
        return None
    person_id = str(event["person"]["id"])
    start, end = int(event["startTime"]["ts"]), int(event["endTime"]["ts"])
    state = (
        await client.execute(APPROVAL_STATE, {"p": person_id, "s": start, "e": end}, apikey=key)
    )["getApprovalState"] or {}
    details = state.get("stageDetails") or []
    return ApprovalSnapshot(
        person_id=person_id,
        start_ms=start,
        end_ms=end,
        status=state.get("status"),
        stage=state.get("currentStage"),
        submit_id=state.get("submitId"),
        pending=tuple((str(p["id"]), str(p["name"])) for p in state.get("pendingApprovers") or []),
        stage_count=len(details),
        approved_by={
            int(d["stage"]): tuple(
                str((a.get("person") or {}).get("name") or "") for a in d.get("approvedBy") or []
            )
            for d in details
        },
        by_name=(state.get("by") or {}).get("name"),
    )


async def person_info(client: ServiceClient, key: str, person_id: str) -> dict[str, Any] | None:
    found = (await client.execute(PERSON, {"id": person_id}, apikey=key, allow_partial=True)).get(
        "getPerson"
    )
    if not found:
        return None
    person = dict(found)
    if await client.offers("SvcTimeSettings", "autoSubmit", apikey=key):
        extra = (await client.execute(
            PERSON_AUTO_SUBMIT_EXTENSION, {"id": person_id}, apikey=key, allow_partial=True
        )).get("getPerson") or {}
        settings = extra.get("timeSettings") or {}
        person["timeSettings"] = {**(person.get("timeSettings") or {}), **settings}
    return person


def time_zone_of(person: dict[str, Any]) -> str:
    return str(((person.get("localisation") or {}).get("timeZone") or {}).get("value") or "UTC")


def setting_of(person: dict[str, Any], name: str) -> int | None:
    value = ((person.get("timeSettings") or {}).get(name) or {}).get("value")
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None


async def preference(runtime: Runtime, organisation_id: str, person_id: str) -> str:
    async with runtime.state_sessions() as session:
        row = await session.get(NotificationPreference, (organisation_id, person_id))
        return row.mode if row is not None else INSTANT


async def set_preference(runtime: Runtime, organisation_id: str, person_id: str, mode: str) -> None:
    from timebot.state.db import unit_of_work

    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    async with unit_of_work(runtime.state_sessions) as session:
        row = await session.get(NotificationPreference, (organisation_id, person_id))
        if row is None:
            row = NotificationPreference(organisation_id=organisation_id, person_id=person_id)
            session.add(row)
        row.mode = mode
        row.updated_ms = runtime.clock.now_ms()


async def already_queued(runtime: Runtime, dedupe_key: str) -> bool:
    async with runtime.state_sessions() as session:
        found = await session.scalar(
            select(OutboxMessage.id).where(OutboxMessage.dedupe_key == dedupe_key)
        )
        return found is not None


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
    approver = await person_info(runtime.client, key, approver_id)
    if approver is None or not approver.get("email") or approver.get("archived"):
        return False
    now = runtime.clock.now_ms()
    links = review_links(settings, submit_id, approver_id, stage, now)
    mode = await preference(runtime, organisation_id, approver_id)
    rendered = ctx.templates.mail(
        template,
        approver_name=approver["name"],
        summary=summary,
        period=period_label(summary.start_ms, summary.end_ms, summary.time_zone),
        stage=stage,
        stage_count=stage_count,
        approve_url=links.approve_url,
        reject_url=links.reject_url,
        reply_address=reply_address(links.reply_token, settings.mail_domain),
        prefs_url=prefs_url(settings, organisation_id, approver_id, now),
        mode=mode,
        **(extra or {}),
    )
    message = build_message(settings, rendered, to=str(approver["email"]),
                            reply_token=links.reply_token)
    queued: bool = await ctx.mail.outbox.enqueue(
        message, kind=kind, envelope_from=settings.mail_from, dedupe_key=dedupe_key
    )
    if queued:
        ctx.mail.outbox_worker.wake()
        log.debug("approver_mail_queued", kind=kind, submit=submit_id, stage=stage,
                 approver=approver_id)
    return queued


class ReviewRequests:
    """The bus subscriber for review requests."""

    def __init__(self, ctx: MailContext) -> None:
        self.ctx = ctx
        self.runtime = ctx.runtime

    async def __call__(self, event: ServiceEvent) -> None:
        if event.event != APPROVAL_UPDATE:
            return
        await self.handle(event)

    async def handle(self, event: ServiceEvent) -> int:
        data = event.data
        submit_id = data.get("submitId")
        stage = data.get("stage")
        if data.get("status") != "s" or not submit_id or not isinstance(stage, int):
            return 0
        wanted = [p for p in data.get("pendingApprovers") or [] if p and p.get("id")]
        if not wanted:
            return 0
        # A workflow restart (same submission, new round) asks the first stage again.
        round_mark = f":r{event.timestamp_ms}" if data.get("action") == "restarted" else ""
        todo = [
            p for p in wanted
            if not await already_queued(
                self.runtime, review_dedupe_key(submit_id, stage, p["id"], round_mark)
            )
        ]
        if not todo:
            return 0
        runtime = self.runtime
        key = await runtime.directory.integration_key(event.organisation_id)
        snapshot = await approval_snapshot(runtime.client, key, submit_id)
        if (
            snapshot is None
            or snapshot.submit_id != submit_id
            or snapshot.status != "s"
            or snapshot.stage != stage
        ):
            log.info("review_request_stale", submit=submit_id, stage=stage)
            return 0
        still = snapshot.pending_ids()
        summary = await load_summary(
            runtime.client, key, snapshot.person_id, snapshot.start_ms, snapshot.end_ms, submit_id
        )
        sent = 0
        for approver in todo:
            if approver["id"] not in still:
                continue
            if await preference(runtime, event.organisation_id, approver["id"]) == DIGEST:
                continue  # the next daily digest lists it
            sent += await send_approver_mail(
                self.ctx,
                template="review_request",
                organisation_id=event.organisation_id,
                submit_id=submit_id,
                stage=stage,
                stage_count=int(data.get("stageCount") or snapshot.stage_count or 1),
                approver_id=approver["id"],
                summary=summary,
                dedupe_key=review_dedupe_key(submit_id, stage, approver["id"], round_mark),
                kind="review",
            )
        return sent


def days_between(start_ms: int, end_ms: int) -> int:
    return max(0, (end_ms - start_ms) // DAY_MS)


def after_days(ms: int, days: int) -> int:
    return ms + int(timedelta(days=days).total_seconds() * 1000)
