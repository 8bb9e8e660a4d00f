"""Which of many dedupe keys a queue holds already, read in a few statements: a run that
queues a notification for each of a page of people asks once a page, not once a person
(issue #40: one round trip a reminder to a busy PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from plumbing.in_lists import in_lists


async def present_keys(session: AsyncSession, column: Any, keys: Iterable[str]) -> set[str]:
    """The `keys` that `column` (a queue's dedupe key) holds, in a statement per IN list."""
    found: set[str] = set()
    for chunk in in_lists(keys):
        found.update(await session.scalars(select(column).where(column.in_(chunk))))
    return found
