"""`timebot people list`: every person of the organisations timebot serves, with how timebot
acts for them (their own linked key, a key the embedded service provisioned, or none yet) and
their Slack identity. Never a key.

People come from the service (`getPersons`, active and archived, with the integration key);
links from the bot's own directory. A link whose person the service no longer lists is shown
too (so that nothing timebot holds a key for is hidden).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from timebot.client import ServiceClient, operation
from timebot.directory.people import DirectoryEntry, PeopleDirectory
from timebot.errors import TimebotError
from timebot.state.slack_workspaces import status_line, workspace_records

ALL_PERSONS = operation(
    """query PeopleListing {
      active: getPersons { id name email }
      archived: getPersons(archived: true) { id name email }
    }"""
)
HEADER = ("ORGANISATION", "EMAIL", "NAME", "LINK", "SLACK")
NOT_LINKED_EMBEDDED = "not yet (key issued on first use)"
NOT_LINKED_HOSTED = "not linked (timebot people link)"


@dataclass(frozen=True)
class PersonRow:
    organisation_id: str
    email: str
    name: str
    link: str
    slack: str


def rows_for(
    organisation_id: str,
    persons: list[dict[str, Any]],
    archived_ids: set[str],
    links: dict[tuple[str, str], DirectoryEntry],
    *,
    embedded: bool,
    own_address: str,
) -> list[PersonRow]:
    """Pure: one row per person of one organisation (timebot's own person left out)."""
    rows: list[PersonRow] = []
    seen: set[str] = set()
    for person in persons:
        email = str(person.get("email") or "")
        if person["id"] in seen or email.lower() == own_address.lower():
            continue
        seen.add(person["id"])
        entry = links.get((organisation_id, person["id"]))
        if entry is not None:
            link = entry.source
        else:
            link = NOT_LINKED_EMBEDDED if embedded else NOT_LINKED_HOSTED
        name = str(person.get("name") or "")
        if person["id"] in archived_ids:
            name = f"{name} (archived)"
        slack = entry.slack_user_id if entry is not None and entry.slack_user_id else "-"
        rows.append(PersonRow(organisation_id, email or "-", name, link, slack))
    for (org_id, person_id), entry in links.items():
        if org_id == organisation_id and person_id not in seen:
            rows.append(PersonRow(org_id, entry.email, f"{entry.name} (not in the service)",
                                  entry.source, entry.slack_user_id or "-"))
    rows.sort(key=lambda row: (row.email, row.name))
    return rows


def render(rows: list[PersonRow]) -> list[str]:
    """Pure: a header and aligned columns."""
    table = [HEADER, *((r.organisation_id, r.email, r.name, r.link, r.slack) for r in rows)]
    widths = [max(len(line[column]) for line in table) for column in range(len(HEADER) - 1)]
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(line[:-1], widths, strict=True))
        + "  " + line[-1]
        for line in table
    ]


async def people_rows(
    directory: PeopleDirectory, client: ServiceClient, *, embedded: bool, own_address: str
) -> tuple[list[PersonRow], list[str]]:
    """Every person with their link; and warnings (an organisation that could not be read:
    then only its links are listed)."""
    entries = await directory.entries()
    links = {(e.organisation_id, e.person_id): e for e in entries}
    warnings: list[str] = []
    rows: list[PersonRow] = []
    try:
        organisation_ids = await directory.organisation_ids()
    except TimebotError as error:
        warnings.append(f"the service's people are not listed ({error}): only linked people")
        organisation_ids = []
    for organisation_id in sorted(set(organisation_ids)):
        try:
            key = await directory.integration_key(organisation_id)
            data = await client.execute(ALL_PERSONS, apikey=key)
        except TimebotError as error:
            warnings.append(f"organisation {organisation_id}: not read ({error})")
            persons, archived = [], set()
        else:
            archived_list = [p for p in data.get("archived") or [] if p]
            persons = [p for p in data.get("active") or [] if p] + archived_list
            archived = {p["id"] for p in archived_list}
        rows += rows_for(organisation_id, persons, archived, links, embedded=embedded,
                         own_address=own_address)
    listed = set(organisation_ids)
    for entry in entries:
        if entry.organisation_id not in listed:
            rows.append(PersonRow(entry.organisation_id, entry.email, entry.name, entry.source,
                                  entry.slack_user_id or "-"))
    for record in await workspace_records(directory.sessions):
        if not record.active:  # the operator learns it here too
            warnings.append(status_line(record))
    return rows, warnings
