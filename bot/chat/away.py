"""Away status in chat, noted as a fact like an out-of-office auto-reply (issue 28): a chat
status that says its person is away records the absence until when it says; one that no longer
says so clears it. Nothing is answered, nothing decided: the record only lets someone who may
decide be asked (timebot.notify.escalation_tick).

Whether a status says "away", and until when, is the platform's rule (Slack's status text and
emoji: timebot.notify.away_facts.slack_status_away; a Teams user's automatic replies and
presence from Microsoft Graph: bot.teams.graph_away); `note_away` records what it decided,
under the platform's `source` (one record per person and source), `message_key` naming the
status seen (the same status seen again changes nothing)."""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING

import structlog

from timebot.state.away import absences, clear_absence, record_absence

if TYPE_CHECKING:
    from timebot.process.runtime import Runtime

log = structlog.get_logger("timebot.chat.away")


async def note_away(runtime: Runtime, *, organisation_id: str, person_id: str, away: bool,
                    until: date | None, seen_ms: int, source: str, message_key: str) -> str:
    """Record (away, seen at `seen_ms`) or clear (not away) the person's absence from
    `source`; what became of it, in words for the log."""
    if not away:
        # Read first: most statuses seen say "not away" of someone never recorded, and a read
        # takes no write lock (a fan-out asks about 1,000 approvers at once).
        known = await absences(runtime.state_sessions, organisation_id, [person_id])
        if not any(absence.source == source for absence in known.get(person_id, [])):
            return "not away"
        cleared = await clear_absence(runtime.state_sessions, organisation_id=organisation_id,
                                      approver_id=person_id, source=source)
        return "cleared" if cleared else "not away"
    recorded = await record_absence(
        runtime.state_sessions, organisation_id=organisation_id, approver_id=person_id,
        until=until, seen_ms=seen_ms, source=source, message_key=message_key)
    log.info("approver_away", approver=person_id, source=source,
             until=until.isoformat() if until else "unknown", recorded=recorded)
    return f"away until {until.isoformat() if until else 'unknown'}"
