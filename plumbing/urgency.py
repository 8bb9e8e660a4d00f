"""Whether a person waits on the work in hand (issue #40): set by the fronts around what a
person just did (a reply being processed, a signed Slack request, a queue's express lane) and
read where work of every kind meets, such as the SQLite write lock (plumbing.write_turns). It
is a context variable: tasks started inside inherit it, and it never leaks out."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_INTERACTIVE: ContextVar[bool] = ContextVar("interactive", default=False)


def is_interactive() -> bool:
    return _INTERACTIVE.get()


@contextmanager
def interactive(flag: bool = True) -> Iterator[None]:
    """Mark what runs inside as work a person waits on (or, with False, as not)."""
    token = _INTERACTIVE.set(flag)
    try:
        yield
    finally:
        _INTERACTIVE.reset(token)
