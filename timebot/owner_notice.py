"""What the owner of a timesheet is told when it is decided: rejected (with the reason) or
finally approved by an approver. Intermediate stage approvals tell the owner nothing, nor does
an automatic approval (no stages, or the service's auto-approval): the owner did not wait
for anyone then, and the nudges already count such a timesheet as done.

Pure texts, shared by the e-mail (`mail.owner_notices`) and Slack (`bot.owner_notices`)
halves, plus the one look-up both need (the owner's name, address and time zone: from a read
of the last seconds when the directory holds one, else getPerson). Each notice
is keyed by the service event that reported the decision (`owner_notice_key`), so the outbox
and the Slack queue send it once however often the event is dispatched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from timebot.client import ServiceClient, operation
from timebot.directory import PeopleDirectory, PersonDetails
from timebot.periods_local import local_period
from timebot.stages import stage_label

__all__ = [
    "PERSON_FIELDS", "OwnerNotice", "load_owner", "owner_notice", "owner_notice_key",
    "person_details",
]

# What a read of a person (getPerson, or an approval event's person) selects for the notice.
PERSON_FIELDS = ("id name email archived localisation { timeZone { value } } "
                 "notificationSettings { value { email push approvalUpdate { frequency } } }")
OWNER = operation(
    f"query NoticeOwner($id: SvcId!) {{ getPerson(id: $id) {{ {PERSON_FIELDS} }} }}"
)


def person_details(found: dict[str, Any]) -> PersonDetails:
    """A person as read with PERSON_FIELDS (the time zone UTC when unset)."""
    zone = ((found.get("localisation") or {}).get("timeZone") or {}).get("value") or "UTC"
    notify = (found.get("notificationSettings") or {}).get("value") or {}
    return PersonDetails(str(found["id"]), str(found.get("name") or ""),
                         found.get("email") or None, str(zone), bool(found.get("archived")),
                         notify)


async def load_owner(
    client: ServiceClient, key: str, person_id: str, directory: PeopleDirectory | None = None
) -> PersonDetails | None:
    """The owner as the notice needs them (name, address, time zone); None when unknown or
    archived. With `directory`, what a read of the last seconds found (a reply's event read)
    when it holds that."""
    details = directory.recent_details(person_id) if directory is not None else None
    if details is None:
        found = (await client.execute(OWNER, {"id": person_id}, apikey=key,
                                      allow_partial=True)).get("getPerson")
        if not found:
            return None
        details = person_details(found)
        if directory is not None:
            directory.note_details(details)
    return None if details.archived else details


@dataclass(frozen=True)
class OwnerNotice:
    kind: str  # "rejected" | "approved"
    owner_id: str
    by_name: str
    period: str
    stage: str  # "stage 1 of 2"; "" when the event does not say
    reason: str

    @property
    def subject(self) -> str:
        verb = "was rejected" if self.kind == "rejected" else "is approved"
        return f"Your timesheet for {self.period} {verb}"

    @property
    def headline(self) -> str:
        at = f" at {self.stage}" if self.stage else ""
        if self.kind == "rejected":
            return f"{self.by_name} rejected your timesheet for {self.period}{at}."
        return f"{self.by_name} approved your timesheet for {self.period}{at}: it is now approved."

    @property
    def todo(self) -> str:
        if self.kind == "rejected":
            return "Correct the timesheet and submit it again."
        return ""

    def text(self) -> str:
        """The plain text (Slack's message; the e-mail's body without the footer)."""
        lines = [self.headline]
        if self.kind == "rejected":
            lines += ["", "Reason:", *[f"  {line}" for line in
                                      (self.reason or "(no reason given)").splitlines()]]
        if self.todo:
            lines += ["", self.todo]
        return "\n".join(lines)


def owner_notice(data: dict[str, Any], time_zone: str | None) -> OwnerNotice | None:
    """The notice an approvalEventUpdate gives the owner: None unless it reports a rejection
    or the final approval."""
    status, action = data.get("status"), data.get("action")
    if status == "r" and action == "rejected":
        kind = "rejected"
    elif status == "a" and action == "approved":
        kind = "approved"
    else:
        return None
    owner_id = str((data.get("person") or {}).get("id") or "")
    start, end = data.get("startTime"), data.get("endTime")
    if not owner_id or not isinstance(start, int) or not isinstance(end, int):
        return None
    stage, count = data.get("stage"), data.get("stageCount")
    where = (
        stage_label(stage, count) if isinstance(stage, int) and isinstance(count, int) else ""
    )
    return OwnerNotice(
        kind=kind,
        owner_id=owner_id,
        by_name=str((data.get("by") or {}).get("name") or "An approver"),
        period=local_period(start, end, time_zone),
        stage=where,
        reason=str(data.get("comment") or "").strip(),
    )


def owner_notice_key(event_id: str) -> str:
    """The dedupe key of the notice of one service event (the same in the outbox and the
    Slack queue)."""
    return f"owner-notice:{event_id}"[:200]
