"""What the owner of a timesheet is told when it is decided: rejected (with the reason) or
finally approved by an approver. Intermediate stage approvals tell the owner nothing, nor does
an automatic approval (no stages, or the service's auto-approval): the owner did not wait
for anyone then, and the nudges already count such a timesheet as done.

Pure texts, shared by the e-mail (`mail.outbound.owner_notices`) and Slack
(`bot.slack.owner_notices`) halves, in the owner's language (`timebot.l10n`: build and write
the notice inside `l10n.using(owner.localisation)`), plus the one look-up both need (the
owner's name, address, time zone and localisation: from a read of the last seconds when the
directory holds one, else getPerson). Each notice is keyed by the service event that reported
the decision (`owner_notice_key`), so the outbox and the Slack queue send it once however often
the event is dispatched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from timebot.client import ServiceClient, operation
from timebot.directory.people import PeopleDirectory, PersonDetails
from timebot.l10n import LOCALISATION_FIELDS, Localisation, _, format_period, localisation_of
from timebot.stages import stage_label

__all__ = [
    "PERSON_FIELDS", "OwnerNotice", "load_owner", "owner_notice", "owner_notice_key",
    "person_details",
]

# What a read of a person (getPerson, or an approval event's person) selects for the notice.
PERSON_FIELDS = (f"id name email archived {LOCALISATION_FIELDS} "
                 "notificationSettings { value { email push approvalUpdate { frequency } } }")
OWNER = operation(
    f"query NoticeOwner($id: SvcId!) {{ getPerson(id: $id) {{ {PERSON_FIELDS} }} }}"
)


def person_details(found: dict[str, Any]) -> PersonDetails:
    """A person as read with PERSON_FIELDS (the time zone UTC when unset)."""
    local = localisation_of(found)
    notify = (found.get("notificationSettings") or {}).get("value") or {}
    return PersonDetails(str(found["id"]), str(found.get("name") or ""),
                         found.get("email") or None, local.time_zone,
                         bool(found.get("archived")), local, notify)


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

    # The texts read the language in force (`l10n.using(owner.localisation)`).
    @property
    def subject(self) -> str:
        if self.kind == "rejected":
            return _("Your timesheet for {period} was rejected").format(period=self.period)
        return _("Your timesheet for {period} is approved").format(period=self.period)

    @property
    def headline(self) -> str:
        if self.kind == "rejected":
            text = (_("{by} rejected your timesheet for {period} at {stage}.") if self.stage
                    else _("{by} rejected your timesheet for {period}."))
        else:
            text = (_("{by} approved your timesheet for {period} at {stage}: it is now "
                      "approved.") if self.stage
                    else _("{by} approved your timesheet for {period}: it is now approved."))
        return text.format(by=self.by_name, period=self.period, stage=self.stage)

    @property
    def todo(self) -> str:
        if self.kind == "rejected":
            return _("Correct the timesheet and submit it again.")
        return ""

    @property
    def reason_lines(self) -> list[str]:
        return (self.reason or _("(no reason given)")).splitlines()

    def text(self) -> str:
        """The plain text (Slack's message; the e-mail's body without the footer)."""
        lines = [self.headline]
        if self.kind == "rejected":
            lines += ["", _("Reason:"), *[f"  {line}" for line in self.reason_lines]]
        if self.todo:
            lines += ["", self.todo]
        return "\n".join(lines)


def owner_notice(data: dict[str, Any], local: Localisation | None) -> OwnerNotice | None:
    """The notice an approvalEventUpdate gives the owner: None unless it reports a rejection
    or the final approval. Its period in the owner's `local` zone and date format, named as
    the review mail names it (`Mon 30 Nov to Sun 06 Dec 2026`); call it
    inside `l10n.using(local)` (the stage's words are the language in force's)."""
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
        by_name=str((data.get("by") or {}).get("name") or _("An approver")),
        period=format_period(start, end, local or Localisation()),
        stage=where,
        reason=str(data.get("comment") or "").strip(),
    )


def owner_notice_key(event_id: str) -> str:
    """The dedupe key of the notice of one service event (the same in the outbox and the
    Slack queue)."""
    return f"owner-notice:{event_id}"[:200]
