"""How a durable queue goes on after one of its rows failed (pure decisions).

A failure is either temporary — the service unreachable or answering 5xx, a database error, the
relay down: nothing about the row itself — or the row's own (it cannot be rendered, parsed,
handled). A temporary failure is retried with growing delays for as long as it lasts: it never
sets the row aside. A failure of the row's own is retried a few times too (with the same
delays: a fix may be deployed meanwhile), then the row is set aside (`failed`) with its
reason, so that the rows behind it flow.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import exc as sql_errors

from timebot.errors import ServiceUnavailable
from timebot.state.queue import FAILED, QUEUED


@dataclass(frozen=True)
class Backoff:
    first_ms: int
    max_ms: int

    def delay_ms(self, attempts: int) -> int:
        """After the `attempts`-th failed attempt: first, twice that, four times… at most max."""
        return int(min(self.first_ms * 2 ** max(0, min(attempts - 1, 30)), self.max_ms))


@dataclass(frozen=True)
class AfterFailure:
    status: str  # QUEUED (tried again at next_attempt_ms) or FAILED (set aside)
    next_attempt_ms: int
    failures: int  # failures of the row's own so far, this one included


def after_failure(
    *, attempts: int, failures: int, temporary: bool, now_ms: int, backoff: Backoff,
    max_failures: int,
) -> AfterFailure:
    """`attempts`: the row's attempts, this one included; `failures`: its own failures before
    this one."""
    if temporary:
        return AfterFailure(QUEUED, now_ms + backoff.delay_ms(attempts), failures)
    failures += 1
    if failures >= max_failures:
        return AfterFailure(FAILED, now_ms, failures)
    return AfterFailure(QUEUED, now_ms + backoff.delay_ms(failures), failures)


_TEMPORARY: tuple[type[BaseException], ...] = (
    ServiceUnavailable,
    OSError,  # ConnectionError, a refused connection, a full disk…
    TimeoutError,
    sql_errors.OperationalError,  # the database went away, `database is locked`
    sql_errors.InterfaceError,
    sql_errors.DisconnectionError,
    sql_errors.TimeoutError,  # no connection free in the pool
)


_STATEMENT_ERRORS = (
    sql_errors.IntegrityError, sql_errors.DataError, sql_errors.ProgrammingError,
    sql_errors.NotSupportedError,
)
"""Database errors about the statement or its data (possibly the row's own); any other one —
a connection refused, a database not accepting connections, a serialization failure — is the
database's state, temporary."""


def is_temporary(error: BaseException) -> bool:
    """Does the error (or what it was raised from) say that something else than the row
    failed? Only explicit causes count (`raise … from`): an error raised while another was
    being handled may well be the row's own."""
    seen = 0
    current: BaseException | None = error
    while current is not None and seen < 16:
        if isinstance(current, _TEMPORARY):
            return True
        if isinstance(current, sql_errors.DBAPIError) and (
            current.connection_invalidated or not isinstance(current, _STATEMENT_ERRORS)
        ):
            return True
        current = current.__cause__
        seen += 1
    return False
