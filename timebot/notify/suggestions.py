"""The automatic timesheet's pending suggested entries of a person's period, as the reminders
read them over GraphQL: an extension of the embedded service (SvcPerson.suggestedTimeRecords),
asked for only where the service offers it."""

from __future__ import annotations

from dataclasses import dataclass

import structlog

from timebot.client import ServiceClient, operation
from timebot.errors import PermissionRefused, ServiceRequestError
from timebot.notify.person_notify import NOTIFY_FIELDS, PersonNotify, notify_of, person_notify

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


# What the reminder's mail reads of its person, in one request (was two a reminder): their
# notification settings and templates, and their suggested time in the period.
REMINDER_READS_EXTENSION = operation(
    f"""query ReminderReads($id: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) {{
      getPerson(id: $id) {{ id {NOTIFY_FIELDS}
        suggestedTimeRecords(startTime: $s, endTime: $e) {{ duration }} }}
    }}"""
)


async def notify_and_suggestions(client: ServiceClient, key: str, person_id: str,
                                 start_ms: int, end_ms: int) -> tuple[PersonNotify, Pending]:
    """`person_notify` and `pending_suggestions` of the person, in one request where the
    service offers both; an error in it has them read apart (a failing suggestions read costs
    the reminder its mention only, as it did)."""
    if await client.offers("SvcPerson", "notificationSettings", apikey=key) and \
            await client.offers("SvcPerson", "suggestedTimeRecords", apikey=key):
        try:
            data = await client.execute(REMINDER_READS_EXTENSION,
                                        {"id": person_id, "s": start_ms, "e": end_ms},
                                        apikey=key, allow_partial=True)
        except ServiceRequestError as error:
            log.warning("reminder_reads_apart", person=person_id, error=str(error))
        else:
            found = data.get("getPerson") or {}
            return notify_of(found), pending_of(found.get("suggestedTimeRecords"))
    return (await person_notify(client, key, person_id),
            await pending_suggestions(client, key, person_id, start_ms, end_ms))
