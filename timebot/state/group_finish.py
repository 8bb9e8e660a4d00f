"""Rows' outcomes written at once, each as soon as it can be, together with the others that
ended while the previous write ran (a database's group commit): `await done.add(id, ...)`
returns once that row's outcome is committed. Where an outcome must be on disk right after
the act it records (a message handed to a relay that cannot tell a repeat), this keeps the
window as short as one transaction per row did, and under load writes several rows a
transaction: four deliveries at a time wrote eight transactions a message round, now one or
two. `FinishBatch` is the other way, for acts that may be repeated: it waits to fill a batch."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from timebot.state.queue import finish_many


@dataclass(eq=False)
class _Outcome:
    row_id: str
    values: dict[str, Any]
    written: bool = False
    error: Exception | None = None


class GroupedFinish:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], model: type[Any],
                 owner: str) -> None:
        self.sessions = sessions
        self.model = model
        self.owner = owner
        self._pending: list[_Outcome] = []
        self._lock = asyncio.Lock()
        self.transactions = 0  # written so far (for the tests and the bench)

    async def add(self, row_id: str, **values: Any) -> None:
        """Returns once the row's outcome is written; raises what the write raised (the row
        then stays under this worker's lease, taken over after it like a dead worker's).
        Whoever holds the lock writes every outcome waiting; one cancelled while writing
        leaves them to the next."""
        outcome = _Outcome(row_id, values)
        self._pending.append(outcome)
        async with self._lock:
            if not outcome.written and outcome.error is None:
                group, self._pending = self._pending, []
                try:
                    await finish_many(self.sessions, self.model, self.owner,
                                      [(item.row_id, item.values) for item in group])
                except Exception as error:
                    for item in group:
                        item.error = error
                except BaseException:
                    self._pending[:0] = [item for item in group if item is not outcome]
                    raise
                else:
                    for item in group:
                        item.written = True
                finally:
                    self.transactions += 1
        if outcome.error is not None:
            raise outcome.error
