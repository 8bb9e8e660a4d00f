"""PostgreSQL connections handed out by the pool without a round trip to the server.

SQLAlchemy's `pool_pre_ping` costs three round trips per checkout on asyncpg (BEGIN, an empty
query, ROLLBACK), and a unit of work checks a connection out once: it was more than a third
of all round trips to PostgreSQL. What it guarded against is checked here locally instead:

- A connection the server closed while it sat in the pool (a restart, a terminated backend,
  idle_session_timeout): the server's close reaches asyncpg while the connection is idle, and
  asyncpg then reports it closed. It is replaced at checkout, before any statement of the unit
  of work, so a restart surfaces no error to a unit of work begun after it.
- A connection idle longer than `IDLE_LIMIT_S`: one that a firewall or NAT may have dropped
  without either end knowing (a query on it would hang until TCP gives up). It is replaced
  too; under load a connection is never idle that long, so this costs nothing then.

A unit of work that is running when the server goes away fails as it did with pre-ping (which
only checked at checkout); SQLAlchemy then invalidates every connection of the pool made
before the error, and the caller's retry (the event and outbox workers, the SMTP sender's
4xx retry) gets new ones."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import event
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.ext.asyncio import AsyncEngine

# Below the idle timeouts of the common cloud NATs and load balancers (4 to 10 minutes).
IDLE_LIMIT_S = 120.0

_IDLE_SINCE = "timebot_idle_since"


def replace_dead_connections_on_checkout(
    engine: AsyncEngine, idle_limit_s: float = IDLE_LIMIT_S
) -> None:
    """Have `engine`'s pool replace, at checkout, a connection the server has closed or one
    idle longer than `idle_limit_s` (the checkout then makes a new connection)."""

    @event.listens_for(engine.sync_engine, "checkin")
    def _checked_in(dbapi_connection: Any, record: Any) -> None:
        if dbapi_connection is not None:
            record.info[_IDLE_SINCE] = time.monotonic()

    @event.listens_for(engine.sync_engine, "checkout")
    def _checked_out(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        if dbapi_connection.driver_connection.is_closed():
            raise DisconnectionError("the server closed the connection while it was pooled")
        idle_since = record.info.get(_IDLE_SINCE)
        if idle_since is not None and time.monotonic() - idle_since > idle_limit_s:
            raise DisconnectionError(f"the connection was idle over {idle_limit_s:.0f} s")
