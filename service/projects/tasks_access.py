"""Who owns a task (assignOwnerOfTask): used by the approval workflow ("Task managers")."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from service.models import TaskOwner


async def task_owner_ids(session: AsyncSession, org_id: str, task_id: str) -> set[str]:
    """Ids of the owner of the task (at most one; empty when it has none)."""
    rows = await session.scalars(
        select(TaskOwner.person_id).where(
            TaskOwner.organisation_id == org_id,
            TaskOwner.task_id == task_id,
            TaskOwner.potential.is_(False),
        )
    )
    return set(rows)
