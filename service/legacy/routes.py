"""POST /api/v2: authentication, the account setting, daily limits, then the named service.

One session per request, in up to three short transactions: (1) the token and the usage
counters (committed at once, so that a refused or failing request still counts), (2) the
service itself (committed on success, rolled back on any error: a failed call writes
nothing), (3) the response's bytes added to the counters.
"""

from __future__ import annotations

import json
from typing import Any

import structlog
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from service.errors import PermissionDenied, ServiceError
from service.graphql.context import RequestContext
from service.graphql.execution import Executor
from service.legacy.dispatch import dispatch
from service.legacy.errors import LegacyError
from service.legacy.limits import DAILY_BYTES, add_usage, check_limits, prune_usage
from service.legacy.payload import decode_payload
from service.legacy.request import LegacyRequest
from service.legacy.tokens import authenticate_token, token_from_authorization

log = structlog.get_logger("service.legacy")

PATH = "/api/v2"


def _encode(body: dict[str, Any]) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _error_body(message: str) -> dict[str, Any]:
    return {"status": "error", "message": message}


async def _read_body(request: Request, limit: int) -> tuple[bytes, bool]:
    """The body, read up to `limit` bytes; True when there was more (the rest is not read)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            chunks.append(chunk[: len(chunk) - (size - limit)])
            return b"".join(chunks), True
        chunks.append(chunk)
    return b"".join(chunks), False


async def _run_service(
    session: AsyncSession, context: RequestContext, body: bytes
) -> tuple[int, dict[str, Any], dict[str, str]]:
    """The status, body and headers of the call; commits on success, rolls back otherwise."""
    try:
        result = await dispatch(LegacyRequest(context, decode_payload(body)))
        await session.commit()
        return 200, {"status": "ok", **result}, {}
    except LegacyError as error:
        await session.rollback()
        return error.http_status, _error_body(error.message), error.headers()
    except PermissionDenied as error:
        await session.rollback()
        return 200, _error_body(f"Permission denied: {error.message}"), {}
    except ServiceError as error:
        await session.rollback()
        return 200, _error_body(error.message), {}
    except Exception:
        await session.rollback()
        log.exception("legacy_service_crashed")
        return 500, _error_body("Internal server error"), {}


def legacy_routes(executor: Executor) -> list[BaseRoute]:
    """The route, on the GraphQL executor's sessions, clock and after-commit hook."""
    sessions, clock = executor.sessions, executor.clock

    async def endpoint(request: Request) -> Response:
        now_ms = clock.now_ms()
        try:
            token = token_from_authorization(request.headers.get("authorization"))
        except LegacyError as error:
            return _respond(error.http_status, _error_body(error.message), error.headers())
        # Read before the session opens: no transaction waits on the network. A body larger
        # than a whole day's transfer is refused (after counting what was read).
        body, too_large = await _read_body(request, DAILY_BYTES)
        async with sessions() as session:
            try:
                organisation, person = await authenticate_token(session, token)
            except LegacyError as error:
                await session.rollback()
                return _respond(error.http_status, _error_body(error.message), error.headers())
            # Rollbacks expire loaded objects: keep the ids at hand.
            org_id, person_id = organisation.id, person.id
            usage = await add_usage(session, org_id, person_id, now_ms, 1, len(body))
            if usage.requests == 1:
                await prune_usage(session, person_id, now_ms)
            await session.commit()
            if too_large:
                message = f"The request body is larger than {DAILY_BYTES // 1024} KB"
                return _respond(413, _error_body(message), {})
            try:
                check_limits(usage, len(body), now_ms)
            except LegacyError as error:
                return _respond(error.http_status, _error_body(error.message), error.headers())
            context = RequestContext(
                session=session,
                organisation=organisation,
                person=person,
                clock=clock,
                now_ms=now_ms,
            )
            status, result, headers = await _run_service(session, context, body)
            content = _encode(result)
            await add_usage(session, org_id, person_id, now_ms, 0, len(content))
            await session.commit()
        if status == 200 and result["status"] == "ok" and context.after_commit:
            if executor.after_commit is not None:
                await executor.after_commit(context.after_commit)
        return Response(content, status, headers, media_type="application/json")

    return [Route(PATH, endpoint, methods=["POST"])]


def _respond(status: int, body: dict[str, Any], headers: dict[str, str]) -> Response:
    return Response(_encode(body), status, headers, media_type="application/json")
