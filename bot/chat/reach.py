"""Whether a chat front may send a person a message, and in which language they read it: their
notification settings (the service's `push` switch, which Slack's and Teams' messages share:
person_notify's channel SLACK; and the category that governs the message) and their
localisation, read in one request (a review fan-out makes it one per approver)."""

from __future__ import annotations

from timebot.client import operation
from timebot.errors import AccountInactive, ServiceRequestError
from timebot.l10n import LOCALISATION_FIELDS, Localisation, localisation_of
from timebot.l10n.loading import load_localisation
from timebot.notify.person_notify import NOTIFY_FIELDS, SLACK, gets, notify_of, person_notify
from timebot.process.runtime import Runtime

CHAT_REACH = operation(f"""query ChatReach($id: SvcId!) {{ getPerson(id: $id) {{
      id {NOTIFY_FIELDS} {LOCALISATION_FIELDS} }} }}""")


async def reach(runtime: Runtime, organisation_id: str, person_id: str,
                what: str = "review") -> Localisation | None:
    """The person's localisation, or None when their settings say that `what` (a category of
    person_notify.GOVERNED_BY) is not sent to them in chat; read with their organisation's
    integration key. Where the service answers the read with an error, each half is read as
    it is alone: the settings raise, the language falls back to English."""
    client = runtime.client
    key = await runtime.directory.integration_key(organisation_id)
    if not await client.offers("SvcPerson", "notificationSettings", apikey=key):
        return await load_localisation(client, key, person_id)
    try:
        found = (await client.execute(CHAT_REACH, {"id": person_id}, apikey=key,
                                      allow_partial=True)).get("getPerson") or {}
    except AccountInactive:
        raise
    except ServiceRequestError:
        if not gets((await person_notify(client, key, person_id)).settings, what, SLACK):
            return None
        return await load_localisation(client, key, person_id)
    if not gets(notify_of(found).settings, what, SLACK):
        return None
    return localisation_of(found)
