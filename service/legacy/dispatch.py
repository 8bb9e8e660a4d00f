"""Every service of the legacy interface by name, and the dispatch of a request to the one
its body names."""

from __future__ import annotations

from typing import Any

from service.legacy import absences, companies, custom_fields, persons, time_entries
from service.legacy.errors import InvalidServiceRequest
from service.legacy.request import Handler, LegacyRequest

SERVICES: dict[str, Handler] = {
    **companies.SERVICES,
    **absences.SERVICES,
    **persons.SERVICES,
    **time_entries.SERVICES,
    **custom_fields.SERVICES,
}


async def dispatch(request: LegacyRequest) -> dict[str, Any]:
    name = request.payload.get("service")
    if not isinstance(name, str) or not name:
        raise InvalidServiceRequest("the member service (a string) is required")
    handler = SERVICES.get(name)
    if handler is None:
        known = ", ".join(sorted(SERVICES))
        raise InvalidServiceRequest(f"unknown service {name!r} (services: {known})")
    return await handler(request)
