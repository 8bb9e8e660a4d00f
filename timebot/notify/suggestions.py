"""The automatic timesheet's pending suggested entries of a person's period, as the reminders
read them over GraphQL: an extension of the embedded service (SvcPerson.suggestedTimeRecords),
asked for only where the service offers it."""

from __future__ import annotations

from dataclasses import dataclass

import structlog

from timebot.client import ServiceClient, operation
from timebot.errors import PermissionRefused, ServiceRequestError

log = structlog.get_logger("timebot.notify.suggestions")

SUGGESTED_EXTENSION = operation(
    """query ReminderSuggestions($id: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) {
      getPerson(id: $id) { suggestedTimeRecords(startTime: $s, endTime: $e) { duration } }
    }"""
)


@dataclass(frozen=True)
class Pending:
    count: int = 0
    total_ms: int = 0


def pending_of(items: list[dict[str, object]] | None) -> Pending:
    """Pure: how many suggestions, and their time."""
    durations = [int(str(item.get("duration") or 0)) for item in items or [] if item]
    return Pending(len(durations), sum(durations))


async def pending_suggestions(client: ServiceClient, key: str, person_id: str,
                              start_ms: int, end_ms: int) -> Pending:
    """None (`Pending()`) where the service does not offer them or refuses: a reminder goes
    out without the mention rather than not at all."""
    if not await client.offers("SvcPerson", "suggestedTimeRecords", apikey=key):
        return Pending()
    try:
        data = await client.execute(SUGGESTED_EXTENSION,
                                    {"id": person_id, "s": start_ms, "e": end_ms}, apikey=key,
                                    allow_partial=True)
    except (ServiceRequestError, PermissionRefused) as error:
        log.warning("suggestions_unread", person=person_id, error=str(error))
        return Pending()
    return pending_of((data.get("getPerson") or {}).get("suggestedTimeRecords"))
