"""One legacy call (`LegacyRequest`: the GraphQL request context and the parsed body), what
a service handler is, and what handlers read from the body: an object member, the named
entity of a get-type service, the `active` and `company` filters of list-type services."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy.ext.asyncio import AsyncSession

from service.graphql.context import RequestContext
from service.legacy.errors import InvalidServiceRequest
from service.legacy.values import bool_field
from service.legacy.xids import XidMap
from service.models import AuditTrail


@dataclass
class LegacyRequest:
    """One legacy call: the GraphQL request context (session, organisation, person, clock,
    now) and the parsed body."""

    context: RequestContext
    payload: dict[str, Any]
    _xids: dict[str, XidMap] = field(default_factory=dict)

    @property
    def session(self) -> AsyncSession:
        return self.context.session

    @property
    def org_id(self) -> str:
        return self.context.org_id

    def xids(self, kind: str) -> XidMap:
        if kind not in self._xids:
            self._xids[kind] = XidMap(self.context.session, self.org_id, kind)
        return self._xids[kind]

    @property
    def timezone(self) -> ZoneInfo:
        try:
            return ZoneInfo(self.context.organisation.timezone or "UTC")
        except (ZoneInfoNotFoundError, ValueError):
            return ZoneInfo("UTC")

    def member(self, name: str, required: bool = False) -> dict[str, Any]:
        """The object member `name` of the body ({} when absent and not required)."""
        value = self.payload.get(name)
        if value is None:
            if required:
                raise InvalidServiceRequest(f"the member {name} (an object) is required")
            return {}
        if not isinstance(value, dict):
            raise InvalidServiceRequest(f"the member {name} must be an object")
        return value

    def audit(self, operation: str, arguments: dict[str, Any], entity_id: str) -> None:
        self.session.add(
            AuditTrail(
                organisation_id=self.org_id,
                operation_name=operation,
                person_id=self.context.person.id,
                timestamp_ms=self.context.clock.now_ms(),
                arguments=json.loads(json.dumps(arguments, default=str)),
                response_id=entity_id,
                response_ids=[entity_id],
            )
        )


Handler = Callable[[LegacyRequest], Awaitable[dict[str, Any]]]


def identifier(request: LegacyRequest, resource: str) -> dict[str, Any]:
    """What a get-type service names: top-level `id`/`xid`, or the same inside the resource."""
    for source in (request.payload, request.member(resource)):
        ref = {key: source[key] for key in ("xid", "id") if source.get(key) is not None}
        if ref:
            return ref
    raise InvalidServiceRequest(f"{resource}.get needs an id or an xid")


def active_filter(request: LegacyRequest, resource: str) -> bool | None:
    return bool_field(request.member(resource), "active", resource, None)


def company_filter_value(request: LegacyRequest, resource: str) -> Any:
    """The `company {id|xid}` filter: top-level (as absence.list shows) or in the resource."""
    value = request.payload.get("company")
    if value is None:
        value = request.member(resource).get("company")
    return value
