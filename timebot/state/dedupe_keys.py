"""Which of many dedupe keys a queue holds already, read in a few statements: a run that
queues a notification for each of a page of people asks once a page, not once a person
(issue #40: one round trip a reminder to a busy PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

KEYS_AT_ONCE = 500  # bound parameters a statement: well under every database's limit


async def present_keys(session: AsyncSession, column: Any, keys: Iterable[str]) -> set[str]:
    """The `keys` that `column` (a queue's dedupe key) holds."""
    wanted = list(dict.fromkeys(keys))
    found: set[str] = set()
    for start in range(0, len(wanted), KEYS_AT_ONCE):
        chunk = wanted[start:start + KEYS_AT_ONCE]
        found.update(await session.scalars(select(column).where(column.in_(chunk))))
    return found
