"""Whether a person waits on the work in hand (issue #40): set by the fronts around what a
person just did (a reply being processed, a signed Slack request, a queue's express lane) and
read where work of every kind meets, such as the SQLite write lock (plumbing.write_turns). It
is a context variable: tasks started inside inherit it, and it never leaks out.

Bulk work also yields on its own (`yield_to_people`): the scopes marked interactive are
counted in the process, and a bulk loop (a submission's fan-out, bulk mail, bulk Slack posts)
waits between two of its items while one is open — at most YIELD_SECONDS, so that bulk work
still progresses when people never stop. One event loop runs the process's work: every bulk
item under way makes each await of a Slack acknowledgement or a receipt wait its turn."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_INTERACTIVE: ContextVar[bool] = ContextVar("interactive", default=False)

YIELD_SECONDS = 0.05  # the longest a bulk item waits for people's work to end

_open = 0  # interactive scopes open in this process
_waiting: list[asyncio.Future[None]] = []  # bulk items waiting for them to close


def is_interactive() -> bool:
    return _INTERACTIVE.get()


def people_waiting() -> int:
    """How many scopes of work a person waits on are open in this process."""
    return _open


@contextmanager
def interactive(flag: bool = True) -> Iterator[None]:
    """Mark what runs inside as work a person waits on (or, with False, as not)."""
    global _open
    token = _INTERACTIVE.set(flag)
    if flag:
        _open += 1
    try:
        yield
    finally:
        _INTERACTIVE.reset(token)
        if flag:
            _open -= 1
            if not _open:
                _release()


def _release() -> None:
    waiting, _waiting[:] = list(_waiting), []
    for waiter in waiting:
        if not waiter.done():
            try:
                waiter.set_result(None)
            except RuntimeError:  # its event loop is closed: nobody waits on it any more
                pass


async def yield_to_people(limit: float | None = None) -> None:
    """Bulk work's turn point, between two of its items: while work a person waits on is under
    way in this process, wait for it to end — at most `limit` (YIELD_SECONDS). Work marked
    interactive never waits here."""
    if not _open or is_interactive():
        return
    waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    _waiting.append(waiter)
    try:
        await asyncio.wait((waiter,), timeout=YIELD_SECONDS if limit is None else limit)
    finally:
        if waiter in _waiting:
            _waiting.remove(waiter)
