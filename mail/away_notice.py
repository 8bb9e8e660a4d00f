"""An out-of-office auto-reply to a review e-mail, noted as a fact: the approver is away.

The loop guard (mail.loop_guard) refuses to act on auto-replies, and mail.process never
answers them; for one sent to a reply address (`approvals+<token>@`) it asks this module to
read it first. Recorded (timebot.state.away) only when:

- the reply token verifies (an expired one still names the approver, but is old news: not);
- the From address is the token's approver's own (the people directory's): an auto-reply
  from anyone else, a forwarding address or a stranger, is ignored. The sender need not be
  authenticated: the record decides nothing, it only lets someone who may decide be asked;
- mail.away_reply reads it as an out-of-office reply (with the return date, or without).

Nothing is ever sent back. A redelivered auto-reply (the same message key) records nothing
twice."""

from __future__ import annotations

from datetime import UTC, datetime

import structlog

from mail.approval_reply import find_reply_token
from mail.away_reply import read_away
from mail.handling import InboundMail, Replier
from mail.loop_guard import LoopRefusal
from timebot.errors import DirectoryError
from timebot.state.away import record_absence
from timebot.tokens import TokenError, TokenMissing

log = structlog.get_logger("mail.away_notice")


async def note_away(processor: Replier, mail: InboundMail, verdict: LoopRefusal) -> str:
    """What became of the auto-reply (for the log); never answers it."""
    runtime, settings = processor.runtime, processor.settings
    now_ms = runtime.clock.now_ms()
    try:
        _, token, _ = find_reply_token(mail, settings.secret_key, settings.mail_domain, now_ms)
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
    away = read_away(mail.read.subject, mail.read.text, received, verdict=verdict)
    if away is None:
        return "no absence: not an out-of-office reply"
    recorded = await record_absence(
        runtime.state_sessions, organisation_id=approver.organisation_id,
        approver_id=approver.person_id, until=away.until, seen_ms=now_ms, message_key=mail.key,
    )
    until = away.until.isoformat() if away.until else "unknown"
    log.info("approver_away", id=mail.inbound.id, approver=approver.person_id, until=until,
             recorded=recorded)
    return f"absence {'recorded' if recorded else 'already recorded'}: away until {until}"
