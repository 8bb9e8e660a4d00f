"""Reads of many people a page at a time.

The reference `getPersons` has no paging, and a whole organisation's people with their
settings in one answer is the organisation's size in memory three times over (the service's
result, its JSON, the client's copy): 90 MB at 10,000 people, for a pass that needs one person
at a time. Its filter matches ids (`{id: …}` objects chained by `following: OR`), so a pass
reads the ids first (`filterPersonIds`, a few bytes a person) and then the people PAGE at a
time, each page one request. Embedded or hosted service: the same documents.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from timebot.client import ServiceClient, operation

PAGE = 250
IDS = operation("query PersonIds { filterPersonIds }")  # the active people, as getPersons


def page_query(name: str, selection: str) -> str:
    """The text of `getPersons` of the people a page's filter names, with `selection`."""
    return (f"query {name}($page: [SvcPersonFilter]) "
            f"{{ getPersons(filter: $page) {{ {selection} }} }}")


def page_filter(ids: Sequence[str]) -> list[dict[str, str]]:
    """Pure: the filter matching exactly these people (one object an id, chained by OR)."""
    return [{"id": person_id, "following": "OR"} for person_id in ids]


async def active_ids(client: ServiceClient, key: str) -> list[str]:
    data = await client.execute(IDS, apikey=key)
    return [str(person_id) for person_id in data.get("filterPersonIds") or [] if person_id]


async def person_pages(
    client: ServiceClient, key: str, query: str, ids: Sequence[str] | None = None,
    *, page: int | None = None,
) -> AsyncIterator[list[dict[str, Any]]]:
    """The people of `ids` (default: every active person), PAGE at a time, as `query` (a
    `page_query`) reads them; a person archived or gone between the reads is left out."""
    wanted = await active_ids(client, key) if ids is None else list(dict.fromkeys(ids))
    size = page or PAGE
    for start in range(0, len(wanted), size):
        chosen = page_filter(wanted[start:start + size])
        data = await client.execute(operation(query), {"page": chosen}, apikey=key)
        yield [person for person in data.get("getPersons") or [] if person]
