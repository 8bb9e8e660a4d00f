"""What one review request reads from the service, in as few requests as the answers allow.

Each request costs the service a fixed few milliseconds (authentication, a session, the
execution) beside the work it asks for, and a review request made nine: the approvers'
facts of absence, the submit event, its changes, the approval state, the owner's summary,
then the approver, their autoSubmit and their notification settings. Here the reads that
need nothing of each other go together: the submit event with its changes, riding on the
facts' request; the state with the owner's summary (both at the event's person and period);
the approver with everything the mail to them needs. The answers are
parsed by the same pure functions as the separate queries' (`snapshot_of`, `summarise`,
`notify_of`), so each caller sees what it saw before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from timebot.client import ServiceClient, operation
from timebot.notify.approvals import (
    PERSON_FIELDS,
    STATE_SELECTION,
    ApprovalSnapshot,
    person_info,
    snapshot_of,
)
from timebot.notify.away_facts import Rider
from timebot.notify.person_notify import NOTIFY_FIELDS, PersonNotify, notify_of, person_notify
from timebot.summary import SUMMARY_SELECTION, TimesheetSummary, summarise

EVENT_FIELD = "getApprovalEventById"
EVENT_SELECTION = f"""{EVENT_FIELD}(id: $submitId) {{ id submitId person {{ id }}
        startTime {{ ts }} endTime {{ ts }} timeRecordIds {{ added modified deleted }} }}"""
SUBMIT_EVENT = operation(
    f"""query ReviewSubmitEvent($submitId: SvcId!) {{
      {EVENT_SELECTION}
    }}"""
)
STATE_AND_SUMMARY = operation(
    f"""query ReviewStateAndSummary($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!,
        $person: SvcId!, $start: SvcTimestamp!, $end: SvcTimestamp!) {{
      {STATE_SELECTION}
      {SUMMARY_SELECTION}
    }}"""
)
# The embedded service's autoSubmit beside what every service has: sent only where offered.
APPROVER_EXTENSION = operation(
    f"""query ReviewApprover($id: SvcId!) {{
      getPerson(id: $id) {{
        {PERSON_FIELDS}
        timeSettings {{ autoSubmit {{ value }} }}
        {NOTIFY_FIELDS}
      }}
    }}"""
)


def submit_event_rider(submit_id: str) -> Rider:
    """The submit event's read, to go with the approvers' facts of absence."""
    return Rider("$submitId: SvcId!", EVENT_SELECTION, {"submitId": submit_id})


async def submission_reads(client: ServiceClient, key: str, submit_id: str,
                           carried: Mapping[str, Any] | None = None,
                           ) -> tuple[ApprovalSnapshot, TimesheetSummary] | None:
    """The submission's current state and its owner's summary of the period (with what the
    submission changed); None when the submit event is unknown. `carried`: an answer that
    holds the submit event already (`submit_event_rider`'s); read alone if it does not."""
    if carried is None or EVENT_FIELD not in carried:  # not asked, or refused: as alone
        carried = await client.execute(SUBMIT_EVENT, {"submitId": submit_id}, apikey=key)
    event = carried.get(EVENT_FIELD)
    if not event:
        return None
    person_id = str(event["person"]["id"])
    start, end = int(event["startTime"]["ts"]), int(event["endTime"]["ts"])
    data = await client.execute(STATE_AND_SUMMARY, {
        "p": person_id, "s": start, "e": end, "person": person_id, "start": start, "end": end,
    }, apikey=key)
    snapshot = snapshot_of(person_id, start, end, data["getApprovalState"] or {})
    summary = summarise(data["getPerson"], data["getTimeRecords"], event.get("timeRecordIds"),
                        start, end)
    return snapshot, summary


async def approver_reads(client: ServiceClient, key: str, person_id: str
                         ) -> tuple[dict[str, Any] | None, PersonNotify]:
    """`person_info` and `person_notify` of an approver: one request where the service
    offers both extensions' fields, else each as it reads them alone."""
    if not (await client.offers("SvcTimeSettings", "autoSubmit", apikey=key)
            and await client.offers("SvcPerson", "notificationSettings", apikey=key)):
        return (await person_info(client, key, person_id),
                await person_notify(client, key, person_id))
    found = (await client.execute(APPROVER_EXTENSION, {"id": person_id}, apikey=key,
                                  allow_partial=True)).get("getPerson")
    if not found:
        return None, notify_of({})
    return dict(found), notify_of(found)
