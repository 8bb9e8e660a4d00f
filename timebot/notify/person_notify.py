"""What a person wants to be sent, as the service's settings say (`notificationSettings` and
`emailTemplates`, each the value that applies to them: person > tag > organisation), read over
GraphQL, and the pure decision the fronts ask before each mail or Slack message.

The decision: a channel switched off (`email` for mail, `push` for Slack: timebot's push is
its Slack messages) sends nothing of what a category governs; a category at frequency `none`
sends nothing on either channel. Which category governs what timebot sends is the table
`GOVERNED_BY`: review requests, approval reminders, owner notices (approved, rejected) and the
digest are approval updates; Journal messages in threads are mentions; reminders to submit
a period follow the channel switch only (no category names them). Instantly or as a digest
stays each person's own choice in timebot (`timebot.notify.approvals.preference`): `daily` and
`weekly` do not override it. Receipts (the answer to the person's own mail) are always sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from timebot.client import ServiceClient, operation

EMAIL = "email"
SLACK = "slack"
CHANNEL_SWITCH = {EMAIL: "email", SLACK: "push"}
GOVERNED_BY: dict[str, str | None] = {
    "review": "approvalUpdate",
    "approvalReminder": "approvalUpdate",
    "ownerNotice": "approvalUpdate",
    "digest": "approvalUpdate",
    "journal": "mentions",
    "reminder": None,
}

_CATEGORIES = ("mentions", "managedEntityMentions", "assignedEntityMentions",
               "approvalUpdate", "budgetAlert")
# Written out whole (not generated) so that the front's documents can be checked against
# the schemas: the categories are _CATEGORIES, the templates plumbing.mail_templates.KINDS.
NOTIFY_FIELDS = """notificationSettings { value { email push mentions { frequency }
        managedEntityMentions { frequency } assignedEntityMentions { frequency }
        approvalUpdate { frequency } budgetAlert { frequency } } }
      emailTemplates { signup { value } signin { value } invite { value } mention { value }
        timesheetSubmitted { value } reminder { value } digest { value }
        approvalReminder { value } report { value } }"""
PERSON_NOTIFY = operation(
    f"""query PersonNotify($id: SvcId!) {{ getPerson(id: $id) {{ id
      {NOTIFY_FIELDS} }} }}"""
)


def gets(settings: Mapping[str, Any], what: str, channel: str) -> bool:
    """Whether a person with these notification settings is sent `what` on `channel`
    (unknown settings: yes, as the service's defaults say)."""
    if settings.get(CHANNEL_SWITCH[channel]) is False:
        return False
    category = GOVERNED_BY[what]
    if category is None:
        return True
    return (settings.get(category) or {}).get("frequency") != "none"


@dataclass(frozen=True)
class PersonNotify:
    settings: Mapping[str, Any] = field(default_factory=dict)
    # The templates that apply to the person, by kind (only those set somewhere).
    templates: Mapping[str, str] = field(default_factory=dict)


async def person_notify(client: ServiceClient, key: str, person_id: str) -> PersonNotify:
    """The person's notification settings and e-mail templates (the defaults where the
    service has none: a service without these attributes)."""
    if not await client.offers("SvcPerson", "notificationSettings", apikey=key):
        return PersonNotify()
    found = (await client.execute(PERSON_NOTIFY, {"id": person_id}, apikey=key,
                                  allow_partial=True)).get("getPerson") or {}
    return notify_of(found)


def notify_of(found: Mapping[str, Any]) -> PersonNotify:
    """Pure: what NOTIFY_FIELDS answered, as a PersonNotify."""
    settings = (found.get("notificationSettings") or {}).get("value") or {}
    templates = {kind: str(item["value"]) for kind, item in
                 (found.get("emailTemplates") or {}).items() if item and item.get("value")}
    return PersonNotify(settings, templates)


async def sends(client: ServiceClient, key: str, person_id: str, what: str,
                channel: str) -> bool:
    """`gets` for the person, their settings read now."""
    return gets((await person_notify(client, key, person_id)).settings, what, channel)
