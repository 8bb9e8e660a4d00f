"""A person's localisation read over GraphQL (the organisation's integration key, or theirs)."""

from __future__ import annotations

from timebot.client import ServiceClient, operation
from timebot.errors import AccountInactive, PermissionRefused, ServiceRequestError
from timebot.l10n.settings import ENGLISH, LOCALISATION_FIELDS, Localisation, localisation_of
from timebot.l10n.texts import switch

PERSON_LOCALISATION = operation(
    f"""query PersonLocalisation($id: SvcId!) {{
      getPerson(id: $id) {{ id {LOCALISATION_FIELDS} }}
    }}"""
)


async def load_localisation(client: ServiceClient, apikey: str, person_id: str) -> Localisation:
    """The person's localisation; English house style when the service will not say (a
    front never fails over the language it speaks)."""
    try:
        data = await client.execute(PERSON_LOCALISATION, {"id": person_id}, apikey=apikey,
                                    allow_partial=True)
    except AccountInactive:
        raise
    except (ServiceRequestError, PermissionRefused):
        return ENGLISH
    return localisation_of(data.get("getPerson"))


async def speak_to(client: ServiceClient, apikey: str, person_id: str) -> Localisation:
    """Load the person's localisation and make it the one in force (`texts.switch`)."""
    local = await load_localisation(client, apikey, person_id)
    switch(local)
    return local
