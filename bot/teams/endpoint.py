"""POST /teams/messages: an activity from Teams, checked before anything is done with it.

In order: the bearer JWT (bot.teams.auth; none, or not valid for this app: 401), the body (not
JSON, not an activity as microsoft_agents.activity.Activity reads it: 400), the token's
`serviceurl` claim against the activity's serviceUrl (401): one log line each, never a 500.
A message or an update is acknowledged at once (202) and handled after the ack
(bot.teams.activities: no database write before it). An invoke needs its answer in the HTTP
response: it goes to the handler registered for its name (`InvokeHandlers`), 501 when none."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from microsoft_agents.activity import Activity
from pydantic import ValidationError
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response

from bot.teams.auth import ActivityVerifier, Unauthorized

log = structlog.get_logger("timebot.teams.http")

MAX_BODY = 1024 * 1024
# The SDK's Activity validator logs a traceback for every body it refuses: the one line here
# says it (bodies from whoever holds no token never reach it).
logging.getLogger("microsoft_agents.activity.activity").setLevel(logging.CRITICAL)


class InvokeAnswer:
    """What an invoke handler answers: the HTTP status and JSON body Teams gets."""

    def __init__(self, status: int, body: dict[str, Any] | None = None) -> None:
        self.status, self.body = status, body or {}


InvokeHandler = Callable[[Activity, dict[str, Any]], Awaitable[InvokeAnswer]]


class InvokeHandlers:
    """Invoke activities by name (e.g. "adaptiveCard/action"): one handler each."""

    def __init__(self) -> None:
        self.handlers: dict[str, InvokeHandler] = {}

    def add(self, name: str, handler: InvokeHandler) -> None:
        self.handlers[name] = handler


Later = Callable[[Activity, dict[str, Any]], None]


def messages_endpoint(verifier: ActivityVerifier, invokes: InvokeHandlers, later: Later
                      ) -> Callable[[Request], Awaitable[Response]]:
    """`later(activity, claims)`: schedules the work of a non-invoke activity after the ack."""

    async def endpoint(request: Request) -> Response:
        try:
            claims = await verifier.claims(request.headers.get("authorization"))
        except Unauthorized as refusal:
            log.warning("teams_activity_unauthorized", reason=str(refusal)[:200])
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        try:
            body = await _body(request)
            activity = Activity.model_validate(json.loads(body))
        except (ValueError, ValidationError, ClientDisconnect) as error:
            log.warning("teams_activity_malformed", reason=_reason(error))
            return JSONResponse({"error": "not an activity"}, status_code=400)
        except Exception as error:  # the SDK's validator raises a bare Exception too
            log.warning("teams_activity_malformed", reason=_reason(error))
            return JSONResponse({"error": "not an activity"}, status_code=400)
        named = str(claims.get("serviceurl") or claims.get("serviceUrl") or "")
        if not named or named.rstrip("/") != (activity.service_url or "").rstrip("/"):
            log.warning("teams_activity_unauthorized", reason="serviceUrl is not the token's")
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        if activity.type == "invoke":
            handler = invokes.handlers.get(activity.name or "")
            if handler is None:
                return JSONResponse({}, status_code=501)
            answer = await handler(activity, claims)
            return JSONResponse(answer.body, status_code=answer.status)
        later(activity, claims)
        return Response(status_code=202)

    return endpoint


async def _body(request: Request) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise ValueError("body too large")
        chunks.append(chunk)
    return b"".join(chunks)


def _reason(error: Exception) -> str:
    if isinstance(error, ValidationError):
        return f"{error.error_count()} invalid field(s): " + ", ".join(
            ".".join(str(part) for part in item["loc"]) for item in error.errors()[:3])
    return str(error)[:200]
