"""Named leases (`scheduler_leases`): one process at a time runs a periodic job's tick (the
scheduler, the approval poller, the reconciler's passes) or holds the singleton jobs. A lease
runs until `until_ms`; its holder renews it, another process takes it once it expired."""

from __future__ import annotations

import os
import socket
import uuid
from typing import Any

from sqlalchemy import or_, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from plumbing.clock import Clock
from plumbing.db import unit_of_work
from timebot.state.db import insert_ignoring
from timebot.state.models import SchedulerLease


def new_owner() -> str:
    """A lease holder's name, unique to one holder: the machine, the process, a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


async def take_lease(
    sessions: async_sessionmaker[AsyncSession], name: str, owner: str, now_ms: int,
    lease_ms: int,
) -> bool:
    """Take or renew the named lease until `now_ms + lease_ms`; False when another owner holds
    it and it has not expired."""
    async with unit_of_work(sessions) as session:
        created: Any = await session.execute(
            insert_ignoring(session, SchedulerLease, ("name",)),
            {"name": name, "owner": owner, "until_ms": now_ms + lease_ms},
        )
        if created.rowcount:
            return True
        taken: Any = await session.execute(
            update(SchedulerLease)
            .where(
                SchedulerLease.name == name,
                or_(SchedulerLease.owner == owner, SchedulerLease.until_ms <= now_ms),
            )
            .values(owner=owner, until_ms=now_ms + lease_ms)
        )
        return bool(taken.rowcount)


async def acquire_lease(
    sessions: async_sessionmaker[AsyncSession], clock: Clock, name: str, owner: str,
    lease_ms: int,
) -> bool:
    """Take or renew the named lease for `lease_ms` from now by `clock`."""
    return await take_lease(sessions, name, owner, clock.now_ms(), lease_ms)


async def release_lease(sessions: async_sessionmaker[AsyncSession], name: str, owner: str) -> None:
    """Release the lease if `owner` holds it (a successor may take it at once)."""
    async with unit_of_work(sessions) as session:
        await session.execute(
            update(SchedulerLease)
            .where(SchedulerLease.name == name, SchedulerLease.owner == owner)
            .values(until_ms=0)
        )
