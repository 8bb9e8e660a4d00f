"""External ids: an `xid` supplied at creation replaces the entity's id on the legacy interface.

Once an entity has an xid, requests must name it by `xid` (its `id` no longer finds it) and
every response, including references from other entities, shows `xid` instead of `id`.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from service.legacy.errors import InvalidServiceRequest
from service.legacy.models import LegacyExternalId

MAX_XID_LENGTH = 255


class XidMap:
    """The xids of one kind (table) of one organisation, both ways, loaded on first use."""

    def __init__(self, session: AsyncSession, org_id: str, kind: str) -> None:
        self.session = session
        self.org_id = org_id
        self.kind = kind
        self._by_entity: dict[str, str] = {}
        self._by_xid: dict[str, str] = {}
        self._loaded = False

    async def _load(self) -> None:
        if self._loaded:
            return
        rows = await self.session.execute(
            select(LegacyExternalId.entity_id, LegacyExternalId.xid).where(
                LegacyExternalId.organisation_id == self.org_id,
                LegacyExternalId.kind == self.kind,
            )
        )
        for entity_id, xid in rows.tuples():
            self._by_entity[entity_id] = xid
            self._by_xid[xid] = entity_id
        self._loaded = True

    async def ref(self, entity_id: str | None) -> dict[str, str] | None:
        """`{"xid": ...}` when the entity has one, else `{"id": ...}`; None for no entity."""
        if entity_id is None:
            return None
        await self._load()
        xid = self._by_entity.get(entity_id)
        return {"xid": xid} if xid is not None else {"id": entity_id}

    async def entity_id(self, value: Any, member: str) -> str | None:
        """The id an `{id}` / `{xid}` object names, or None when it names nothing here.

        An entity that has an xid is not found by its id."""
        if not isinstance(value, dict):
            raise InvalidServiceRequest(f"{member} must be an object with id or xid")
        xid, entity_id = value.get("xid"), value.get("id")
        await self._load()
        if xid is not None:
            if not isinstance(xid, str):
                raise InvalidServiceRequest(f"{member}.xid must be a string")
            return self._by_xid.get(xid)
        if entity_id is None:
            raise InvalidServiceRequest(f"{member} needs an id or an xid")
        if not isinstance(entity_id, str):
            raise InvalidServiceRequest(f"{member}.id must be a string")
        if entity_id in self._by_entity:
            return None
        return entity_id

    async def holder(self, xid: str) -> str | None:
        """The entity that holds `xid`, if any (it may have been deleted since)."""
        await self._load()
        return self._by_xid.get(xid)

    async def release(self, entity_id: str) -> None:
        """Forget the xid of an entity that no longer exists."""
        await self.session.execute(
            delete(LegacyExternalId).where(
                LegacyExternalId.organisation_id == self.org_id,
                LegacyExternalId.kind == self.kind,
                LegacyExternalId.entity_id == entity_id,
            )
        )
        xid = self._by_entity.pop(entity_id, None)
        if xid is not None:
            self._by_xid.pop(xid, None)

    async def claim(self, xid: str, entity_id: str, now_ms: int) -> None:
        """Give the new entity `entity_id` the external id `xid` (IntegrityError if taken)."""
        await self._load()
        self.session.add(
            LegacyExternalId(
                organisation_id=self.org_id,
                kind=self.kind,
                entity_id=entity_id,
                xid=xid,
                created_ms=now_ms,
            )
        )
        await self.session.flush()
        self._by_entity[entity_id] = xid
        self._by_xid[xid] = entity_id


def validate_xid(value: Any, member: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidServiceRequest(f"{member}.xid must be a non-empty string")
    if len(value) > MAX_XID_LENGTH:
        raise InvalidServiceRequest(f"{member}.xid is longer than {MAX_XID_LENGTH} characters")
    return value
