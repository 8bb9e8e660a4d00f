"""The daily digest: for each person who chose "digest", once a day (from DIGEST_HOUR in their
own time zone) one e-mail listing every timesheet waiting for them, each with its Approve and
Reject links. What waits is read with the approver's own key (getPendingApprovals), so a
decided timesheet is never listed. Nothing waiting: no mail that day (checked again on the
scheduler's next ticks, so something arriving later that day is still sent that day).
The dedupe key (person, local date) makes it one e-mail a day across processes.

The items are numbered, and stored (timebot.state.digests) before the mail is queued: its
Reply-To carries a "digest-reply" token naming that stored list, so that a reply "approve all",
"approve 1 3" or "reject 2 <reason>" decides exactly what this digest listed
(mail.replies.digest_reply).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import structlog
from sqlalchemy import select

from mail.outbound.custom_mail import chosen, person_values
from mail.outbound.reviews import (
    REPLY_TTL_MS,
    MailContext,
    already_queued,
    build_message,
    prefs_url,
    review_links,
)
from timebot.client import operation
from timebot.l10n import format_duration, localisation_of
from timebot.notify.approvals import DIGEST, period_label, time_zone_of
from timebot.notify.person_notify import EMAIL, PersonNotify, gets
from timebot.notify.review_reads import approver_reads
from timebot.process.runtime import Runtime
from timebot.secret_key.tokens import make_token
from timebot.state.digests import DigestItem, forget_digest, store_digest
from timebot.state.models import NotificationPreference

log = structlog.get_logger("mail.digest")

DIGEST_HOUR = 8

MY_PENDING = operation(
    """query MyPending {
      getPendingApprovals {
        person { id name } startTime { ts } endTime { ts } status currentStage submitId
        totalDuration stageDetails { stage }
      }
    }"""
)


def digest_day(now_ms: int, time_zone: str) -> str | None:
    """Pure: the local date a digest is due for at `now_ms`, or None before DIGEST_HOUR."""
    local = datetime.fromtimestamp(now_ms / 1000, UTC).astimezone(ZoneInfo(time_zone))
    return None if local.hour < DIGEST_HOUR else local.date().isoformat()


async def digest_person_ids(runtime: Runtime, organisation_id: str | None = None
                            ) -> list[tuple[str, str]]:
    """(organisation, person) of everyone who chose the digest (in one organisation)."""
    statement = select(NotificationPreference.organisation_id, NotificationPreference.person_id
                       ).where(NotificationPreference.mode == DIGEST)
    if organisation_id is not None:
        statement = statement.where(NotificationPreference.organisation_id == organisation_id)
    async with runtime.state_sessions() as session:
        return [(row[0], row[1]) for row in await session.execute(statement)]


async def send_digests(ctx: MailContext, organisation_id: str | None = None) -> int:
    sent = 0
    for org_id, person_id in await digest_person_ids(ctx.runtime, organisation_id):
        try:
            sent += await send_digest(ctx, org_id, person_id)
        except Exception:  # one person's failure does not stop the others
            log.exception("digest_failed", person=person_id)
    return sent


@dataclass
class DigestPlan:
    """One person's digest now: the items it would list, or why none goes (`why_not`)."""

    person: dict[str, Any] | None
    notify: PersonNotify
    why_not: str = ""
    dedupe_key: str = ""
    items: list[dict[str, Any]] = field(default_factory=list)


async def digest_plan(ctx: MailContext, organisation_id: str, person_id: str) -> DigestPlan:
    runtime = ctx.runtime
    settings = runtime.settings
    key = await runtime.directory.integration_key(organisation_id)
    person, notify = await approver_reads(runtime.client, key, person_id)
    if person is None or person.get("archived") or not person.get("email"):
        return DigestPlan(person, notify, "archived, unknown or without an e-mail address")
    zone = time_zone_of(person)
    now = runtime.clock.now_ms()
    day = digest_day(now, zone)
    if day is None:
        return DigestPlan(person, notify, f"not yet: due from {DIGEST_HOUR:02d}:00 ({zone})")
    dedupe_key = f"digest:{organisation_id}:{person_id}:{day}"
    if await already_queued(runtime, dedupe_key):
        return DigestPlan(person, notify, f"already sent for {day}")
    own_key = await runtime.directory.apikey_for(organisation_id, person_id)
    pending = (await runtime.client.execute(MY_PENDING, apikey=own_key)).get(
        "getPendingApprovals"
    ) or []
    items: list[dict[str, Any]] = []
    for entry in pending:
        if entry.get("status") != "s" or not entry.get("submitId"):
            continue
        stage = int(entry.get("currentStage") or 0)
        links = review_links(settings, entry["submitId"], person_id, stage, now)
        start, end = int(entry["startTime"]["ts"]), int(entry["endTime"]["ts"])
        items.append({
            "person_name": entry["person"]["name"],
            "period": period_label(start, end, zone, localisation_of(person)),
            "total_ms": int(entry.get("totalDuration") or 0),
            "stage": stage,
            "stage_count": len(entry.get("stageDetails") or []) or 1,
            "approve_url": links.approve_url,
            "reject_url": links.reject_url,
            "listed": DigestItem(
                str(entry["submitId"]), stage, str(entry["person"]["id"]),
                str(entry["person"]["name"]), start, end, zone,
            ),
        })
    if not items:
        return DigestPlan(person, notify, "nothing waits for them")
    return DigestPlan(person, notify, "", dedupe_key, items)


async def send_digest(ctx: MailContext, organisation_id: str, person_id: str) -> int:
    plan = await digest_plan(ctx, organisation_id, person_id)
    if plan.why_not or plan.person is None:
        return 0
    runtime = ctx.runtime
    settings = runtime.settings
    if not gets(plan.notify.settings, "digest", EMAIL):
        return 0  # they turned these mails off (notificationSettings)
    now = runtime.clock.now_ms()
    digest_id = await store_digest(
        runtime.state_sessions, organisation_id, person_id,
        [item["listed"] for item in plan.items], now,
    )
    reply_token = make_token(settings.secret_key, "digest-reply", event_id=digest_id,
                             approver_id=person_id, stage=0, expires_at_ms=now + REPLY_TTL_MS)
    local = localisation_of(plan.person)
    builtin = ctx.templates.mail(
        "digest", local, approver_name=plan.person["name"],
        items=plan.items, mode=DIGEST,
        prefs_url=prefs_url(settings, organisation_id, person_id, now),
    )
    rendered = chosen(plan.notify, "digest", {
        "person": person_values(plan.person), "count": len(plan.items),
        "items": [{"owner": i["person_name"], "period": i["period"],
                   "total": format_duration(i["total_ms"], local)} for i in plan.items]},
        builtin, organisation=organisation_id)
    message = build_message(settings, rendered, to=str(plan.person["email"]),
                            reply_token=reply_token)
    queued = await ctx.mail.outbox.enqueue(
        message, kind="digest", envelope_from=settings.mail_from, dedupe_key=plan.dedupe_key
    )
    if not queued:  # another process queued today's digest: this list names nothing sent
        await forget_digest(runtime.state_sessions, digest_id)
    else:
        ctx.mail.outbox_worker.wake()
        log.info("digest_queued", person=person_id, items=len(plan.items))
    return int(queued)
