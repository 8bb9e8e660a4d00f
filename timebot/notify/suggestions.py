"""The automatic timesheet's pending suggested entries of a person's period, as the reminders
read them over GraphQL: an extension of the embedded service (SvcPerson.suggestedTimeRecords),
asked for only where the service offers it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

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


# What the reminder's mail reads of its person: their notification settings and templates,
# and their suggested time in the period ($start and $end). In one request (was two a
# reminder), or riding on the verdict's (timebot.notify.reminder_reads).
REMINDER_READ_FIELDS = f"""{NOTIFY_FIELDS}
        suggestedTimeRecords(startTime: $start, endTime: $end) {{ duration }}"""
REMINDER_READS_EXTENSION = operation(
    f"""query ReminderReads($id: SvcId!, $start: SvcTimestamp!, $end: SvcTimestamp!) {{
      getPerson(id: $id) {{ id {REMINDER_READ_FIELDS} }}
    }}"""
)


@dataclass(frozen=True)
class ReminderReads:
    """What the reminder's mail needs of its person beside the verdict's facts."""

    notify: PersonNotify
    pending: Pending


def reminder_reads_of(found: Mapping[str, Any]) -> ReminderReads:
    """Pure: a person's REMINDER_READ_FIELDS as answered."""
    return ReminderReads(notify_of(found), pending_of(found.get("suggestedTimeRecords")))


async def offers_reminder_reads(client: ServiceClient, key: str) -> bool:
    """Whether the service has both extensions' fields that REMINDER_READ_FIELDS asks."""
    return await client.offers("SvcPerson", "notificationSettings", apikey=key) and \
        await client.offers("SvcPerson", "suggestedTimeRecords", apikey=key)


async def notify_and_suggestions(client: ServiceClient, key: str, person_id: str,
                                 start_ms: int, end_ms: int) -> ReminderReads:
    """`person_notify` and `pending_suggestions` of the person, in one request where the
    service offers both; an error in it has them read apart (a failing suggestions read costs
    the reminder its mention only, as it did)."""
    if await offers_reminder_reads(client, key):
        try:
            data = await client.execute(REMINDER_READS_EXTENSION,
                                        {"id": person_id, "start": start_ms, "end": end_ms},
                                        apikey=key, allow_partial=True)
        except ServiceRequestError as error:
            log.warning("reminder_reads_apart", person=person_id, error=str(error))
        else:
            return reminder_reads_of(data.get("getPerson") or {})
    return ReminderReads(await person_notify(client, key, person_id),
                         await pending_suggestions(client, key, person_id, start_ms, end_ms))
