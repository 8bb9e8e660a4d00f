"""Writes the task status history: one insert, in the transaction of the change."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncSession

from service.projects.task_status_history_models import TaskStatusChange


async def record_status_entries(session: AsyncSession, organisation_id: str,
                                entries: Iterable[tuple[str, str]], at_ms: int) -> None:
    """Each (task id, status id) entered its status at `at_ms`."""
    rows = [{"organisation_id": organisation_id, "task_id": task_id, "status_id": status_id,
             "at_ms": at_ms} for task_id, status_id in entries]
    if rows:
        await session.execute(insert(TaskStatusChange), rows)
