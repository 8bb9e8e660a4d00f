"""Whether a person waits on the work in hand (issue #40): set by the fronts around what a
person just did (a reply being processed, a signed Slack request, a queue's express lane) and
read where work of every kind meets, such as the SQLite write lock (plumbing.write_turns). It
is a context variable: tasks started inside inherit it, and it never leaks out.

Bulk work also yields on its own (`yield_to_people`): the scopes marked interactive are
counted, and a bulk loop (a submission's fan-out, bulk mail, bulk Slack posts)
waits between two of its items while one is open — at most YIELD_SECONDS, so that bulk work
still progresses when people never stop. One event loop runs the process's work: every bulk
item under way makes each await of a Slack acknowledgement or a receipt wait its turn. The
count is kept per event loop: a loop in another thread (a demo server, a test's server) has
people of its own, and a loop that closed takes its count with it."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

_INTERACTIVE: ContextVar[bool] = ContextVar("interactive", default=False)

YIELD_SECONDS = 0.05  # the longest a bulk item waits for people's work to end


@dataclass
class _People:
    """One event loop's open interactive scopes, and the bulk items waiting for them to close."""

    open: int = 0
    waiting: list[asyncio.Future[None]] = field(default_factory=list)

    def release(self) -> None:
        waiting, self.waiting[:] = list(self.waiting), []
        for waiter in waiting:
            if not waiter.done():
                waiter.set_result(None)


_by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _People] = (
    weakref.WeakKeyDictionary())


def _people() -> _People | None:
    """The running loop's people (None outside one: nothing to count or wait for there)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None
    people = _by_loop.get(loop)
    if people is None:
        people = _by_loop[loop] = _People()
    return people


def is_interactive() -> bool:
    return _INTERACTIVE.get()


def people_waiting() -> int:
    """How many scopes of work a person waits on are open in this event loop."""
    people = _people()
    return people.open if people else 0


@contextmanager
def interactive(flag: bool = True) -> Iterator[None]:
    """Mark what runs inside as work a person waits on (or, with False, as not)."""
    token = _INTERACTIVE.set(flag)
    people = _people() if flag else None
    if people is not None:
        people.open += 1
    try:
        yield
    finally:
        _INTERACTIVE.reset(token)
        if people is not None:
            people.open -= 1
            if not people.open:
                people.release()


async def yield_to_people(limit: float | None = None) -> None:
    """Bulk work's turn point, between two of its items: while work a person waits on is under
    way in this event loop, wait for it to end — at most `limit` (YIELD_SECONDS). Work marked
    interactive never waits here."""
    people = _people()
    if people is None or not people.open or is_interactive():
        return
    waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    people.waiting.append(waiter)
    try:
        await asyncio.wait((waiter,), timeout=YIELD_SECONDS if limit is None else limit)
    finally:
        if waiter in people.waiting:
            people.waiting.remove(waiter)
