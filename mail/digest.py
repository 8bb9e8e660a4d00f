"""The daily digest: for each person who chose "digest", once a day (from DIGEST_HOUR in their
own time zone) one e-mail listing every timesheet waiting for them, each with its Approve and
Reject links. What waits is read with the approver's own key (getPendingApprovals), so a
decided timesheet is never listed. Nothing waiting: no mail that day (checked again on the
scheduler's next ticks, so something arriving later that day is still sent that day).
The dedupe key (person, local date) makes it one e-mail a day across processes.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import structlog
from sqlalchemy import select

from mail.reviews import MailContext, already_queued, build_message, prefs_url, review_links
from timebot.client import operation
from timebot.notify.approvals import DIGEST, period_label, person_info, time_zone_of
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


async def send_digests(ctx: MailContext) -> int:
    runtime = ctx.runtime
    async with runtime.state_sessions() as session:
        rows = list(
            await session.scalars(
                select(NotificationPreference).where(NotificationPreference.mode == DIGEST)
            )
        )
    sent = 0
    for row in rows:
        try:
            sent += await send_digest(ctx, row.organisation_id, row.person_id)
        except Exception:  # one person's failure does not stop the others
            log.exception("digest_failed", person=row.person_id)
    return sent


async def send_digest(ctx: MailContext, organisation_id: str, person_id: str) -> int:
    runtime = ctx.runtime
    settings = runtime.settings
    key = await runtime.directory.integration_key(organisation_id)
    person = await person_info(runtime.client, key, person_id)
    if person is None or person.get("archived") or not person.get("email"):
        return 0
    zone = time_zone_of(person)
    now = runtime.clock.now_ms()
    day = digest_day(now, zone)
    if day is None:
        return 0
    dedupe_key = f"digest:{organisation_id}:{person_id}:{day}"
    if await already_queued(runtime, dedupe_key):
        return 0
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
            "period": period_label(start, end, zone),
            "total_ms": int(entry.get("totalDuration") or 0),
            "stage": stage,
            "stage_count": len(entry.get("stageDetails") or []) or 1,
            "approve_url": links.approve_url,
            "reject_url": links.reject_url,
        })
    if not items:
        return 0
    rendered = ctx.templates.mail(
        "digest", approver_name=person["name"], items=items, mode=DIGEST,
        prefs_url=prefs_url(settings, organisation_id, person_id, now),
    )
    message = build_message(settings, rendered, to=str(person["email"]))
    queued = await ctx.mail.outbox.enqueue(
        message, kind="digest", envelope_from=settings.mail_from, dedupe_key=dedupe_key
    )
    if queued:
        ctx.mail.outbox_worker.wake()
        log.info("digest_queued", person=person_id, items=len(items), day=day)
    return int(queued)
