"""An out-of-office auto-reply to a review e-mail, noted as a fact: the approver is away.

The loop guard (mail.inbound.loop_guard) refuses to act on auto-replies, and mail.inbound.process
never answers them; for one sent to a reply address (`approvals+<token>@`) it asks this module to
read it first. Recorded (timebot.state.away) only when:

- the reply token verifies (an expired one still names the approver, but is old news: not);
- the From address is the token's approver's own (the people directory's): an auto-reply
  from anyone else, a forwarding address or a stranger, is ignored. The sender need not be
  authenticated: the record decides nothing, it only lets someone who may decide be asked;
- mail.replies.away_reply reads it as an out-of-office reply (with the return date, or without).

Nothing is ever sent back. A redelivered auto-reply (the same message key) records nothing
twice.

An absence read from an auto-reply to a review e-mail (not a digest's) also feeds the bus the
approvalEventUpdate of that review's stage again, while the timesheet still waits there: the
review dispatch then asks the stage's other pending approvers, with the reason
(timebot.notify.away_asks). Its delivery id names the auto-reply, so a retry feeds it once."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

import structlog

from mail.inbound.handling import InboundMail, Replier
from mail.inbound.loop_guard import LoopRefusal
from mail.reading.machine_signs import vacation_reply
from mail.replies.approval_reply import find_reply_token
from mail.replies.away_reply import read_away
from timebot.directory.people import DirectoryEntry
from timebot.errors import DirectoryError
from timebot.events.bus import APPROVAL_UPDATE, ServiceEvent
from timebot.notify.approvals import approval_snapshot
from timebot.process.runtime import Runtime
from timebot.secret_key.tokens import ApprovalToken, TokenError, TokenMissing
from timebot.state.away import record_absence

log = structlog.get_logger("mail.away_notice")


async def note_away(processor: Replier, mail: InboundMail, verdict: LoopRefusal) -> str:
    """What became of the auto-reply (for the log); never answers it."""
    runtime, settings = processor.runtime, processor.settings
    now_ms = runtime.clock.now_ms()
    try:
        _, token, purpose = find_reply_token(
            mail, settings.secret_key, settings.mail_domain, now_ms)
    except (TokenError, TokenMissing):
        return "no absence: no valid reply token"
    try:
        approver = await runtime.directory.find_by_person_id(token.approver_id)
    except DirectoryError:
        return "no absence: its approver is unknown"
    sender = mail.read.from_address
    if sender is None or sender != approver.email.strip().lower():
        log.info("away_reply_wrong_sender", id=mail.inbound.id, sender=sender)
        return "no absence: not from the approver's address"
    received = datetime.fromtimestamp(now_ms / 1000, UTC).date()
    away = read_away(mail.read.subject, mail.read.text, received, verdict=verdict,
                     vacation=vacation_reply(mail.read.headers))
    if away is None:
        return "no absence: not an out-of-office reply"
    recorded = await record_absence(
        runtime.state_sessions, organisation_id=approver.organisation_id,
        approver_id=approver.person_id, until=away.until, seen_ms=now_ms, message_key=mail.key,
    )
    until = away.until.isoformat() if away.until else "unknown"
    log.info("approver_away", id=mail.inbound.id, approver=approver.person_id, until=until,
             recorded=recorded)
    outcome = f"absence {'recorded' if recorded else 'already recorded'}: away until {until}"
    if purpose == "reply" and await _ask_again(runtime, approver, token, mail.key):
        outcome += "; the stage's review requests dispatched again"
    return outcome


async def _ask_again(
    runtime: Runtime, approver: DirectoryEntry, token: ApprovalToken, key: str
) -> bool:
    """Feed the bus the review's stage again, if the timesheet still waits there."""
    org_id = approver.organisation_id
    integration = await runtime.directory.integration_key(org_id)
    snapshot = await approval_snapshot(runtime.client, integration, token.event_id)
    if (snapshot is None or not snapshot.waits_at(token.event_id, token.stage)
            or not snapshot.pending):
        return False
    data: dict[str, Any] = {
        "action": "submitted" if token.stage == 0 else "approved",
        "submitId": token.event_id, "person": {"id": snapshot.person_id},
        "startTime": snapshot.start_ms, "endTime": snapshot.end_ms, "status": "s",
        "stage": token.stage, "stageCount": snapshot.stage_count,
        "pendingApprovers": [{"id": pid, "name": name} for pid, name in snapshot.pending],
        "by": None, "comment": None, "reconciled": True, "away": approver.person_id,
    }
    digest = hashlib.sha256(key.encode(errors="replace")).hexdigest()[:16]
    event = ServiceEvent(f"away:{token.event_id}:{token.stage}:{approver.person_id}:{digest}",
                         APPROVAL_UPDATE, org_id, runtime.clock.now_ms(), data)
    if await runtime.events.accept(event):
        runtime.event_worker.wake()
    return True
