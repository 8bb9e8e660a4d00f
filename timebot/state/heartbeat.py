"""Short leases kept alive while a worker holds rows.

A worker claims rows with a short lease (LEASE_MS) and, while it works on them, renews the
lease of every row it still holds every `lease_ms / 4` (one UPDATE per table). A worker that
dies (SIGKILL, a lost machine) stops renewing, and its rows are claimable again within the
lease — seconds instead of minutes — while a live worker's slow row is never taken from it.
"""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Any

import structlog
from sqlalchemy import BigInteger, bindparam, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from plumbing.clock import Clock
from plumbing.tasks import stop_task
from timebot.state.db import unit_of_work
from timebot.state.queue import WORKING

log = structlog.get_logger("timebot.heartbeat")

LEASE_MS = 10_000
"""The lease of a claimed row: how long a dead worker's rows wait before another takes them."""

_RENEWALS: dict[Any, Any] = {}


def _renewal(model: Any) -> Any:
    statement = _RENEWALS.get(model)
    if statement is None:
        table = model.__table__
        statement = (
            update(table)
            .where(table.c.lease_owner == bindparam("renew_owner"), table.c.status == WORKING)
            .values(lease_until_ms=bindparam("renew_until_ms", type_=BigInteger))
        )
        _RENEWALS[model] = statement
    return statement


async def renew_leases(
    sessions: async_sessionmaker[AsyncSession], model: Any, owner: str, until_ms: int
) -> int:
    """Extend the lease of every row `owner` holds; returns how many."""
    async with unit_of_work(sessions) as session:
        result: Any = await session.execute(
            _renewal(model), {"renew_owner": owner, "renew_until_ms": until_ms})
        return int(result.rowcount or 0)


class LeaseHeartbeat:
    """`async with LeaseHeartbeat(...)`: renews the owner's leases until the block ends."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        model: Any,
        owner: str,
        clock: Clock,
        lease_ms: int = LEASE_MS,
        held_until_ms: int = 0,
    ) -> None:
        """`held_until_ms`: when the lease the claim took ends (its `now_ms + lease_ms`)."""
        self.sessions = sessions
        self.model = model
        self.owner = owner
        self.clock = clock
        self.lease_ms = lease_ms
        self.held_until_ms = held_until_ms
        self._task: asyncio.Task[None] | None = None

    def holds(self) -> bool:
        """The rows' lease has not run out by this worker's last renewal: no other worker
        can have taken them over (a claim takes a working row only once its lease passed)."""
        return self.clock.now_ms() < self.held_until_ms

    async def _beat(self) -> None:
        interval = self.lease_ms / 4000
        while True:
            await asyncio.sleep(interval)
            until_ms = self.clock.now_ms() + self.lease_ms
            try:
                await renew_leases(self.sessions, self.model, self.owner, until_ms)
                self.held_until_ms = max(self.held_until_ms, until_ms)
            except Exception:  # the database went away for a moment: the next beat tries
                log.exception("lease_renewal_failed", table=self.model.__tablename__)

    async def __aenter__(self) -> LeaseHeartbeat:
        self._task = asyncio.create_task(self._beat(), name=f"heartbeat:{self.owner}")
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._task is not None:
            await stop_task(self._task)
            self._task = None
