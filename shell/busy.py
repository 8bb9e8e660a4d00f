"""Busy, not broken: a request that could not get a database connection in time (the pool of
its engine exhausted under load: SQLAlchemy's pool timeout), nor SQLite's write lock (another
writer held it past the lock timeout: "database is locked", plumbing.db.is_busy), or whose
front could not reach
the time tracking service (timebot.errors.ServiceUnavailable), is answered 503 with a
Retry-After header — what clients, proxies and Slack take for "try again shortly" — and never
500, which says the request itself broke the server. The GraphQL endpoint answers in its own
shape (`{"errors": [...]}`), so that a client reads the message; the fronts' client takes a
503 for the service unavailable, a temporary failure its queues try again."""

from __future__ import annotations

from typing import Any

import structlog
from sqlalchemy import exc as sql_errors
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from plumbing.db import is_busy
from timebot.errors import ServiceUnavailable

log = structlog.get_logger("shell.busy")

RETRY_AFTER_S = 5
MESSAGE = "The server is busy; try again in a few seconds."
BUSY_ERRORS: tuple[type[Exception], ...] = (sql_errors.TimeoutError, ServiceUnavailable)
# Busy only for some messages (plumbing.db.is_busy); any other is the server's 500.
MAYBE_BUSY: tuple[type[Exception], ...] = (sql_errors.OperationalError,)
_JSON_PATHS = ("/graphql", "/api/")


def busy_body() -> dict[str, Any]:
    """The GraphQL answer of a request refused because the server is busy."""
    return {"errors": [{"message": MESSAGE}]}


async def busy_response(request: Request, error: Exception) -> Response:
    log.warning("busy_503", path=request.url.path, error=type(error).__name__,
                detail=str(error)[:300])
    headers = {"Retry-After": str(RETRY_AFTER_S)}
    if request.url.path.startswith(_JSON_PATHS):
        return JSONResponse(busy_body(), status_code=503, headers=headers)
    return PlainTextResponse(MESSAGE, status_code=503, headers=headers)


async def maybe_busy_response(request: Request, error: Exception) -> Response:
    if is_busy(error):
        return await busy_response(request, error)
    raise error  # the server's 500, logged as any other


def busy_handlers() -> dict[Any, Any]:
    """Starlette's `exception_handlers` for the errors that mean busy."""
    return {**dict.fromkeys(BUSY_ERRORS, busy_response),
            **dict.fromkeys(MAYBE_BUSY, maybe_busy_response)}
