"""POST /slack/events: what reaches the URL is checked before bolt sees it.

bolt parses the body itself (`json.loads` of the body or of a form's `payload`) and builds its
context from the result without a guard, so a body that is not what Slack sends answered 500
with a traceback. Here, in order:

- a body over MAX_BODY bytes is refused (413) without being read whole;
- an unsigned request, or one signed with another secret or outside Slack's five-minute window,
  is answered 401, as bolt would (nothing about the body is revealed to whoever is not Slack);
- a signed body that is not a JSON object (directly or as a form's `payload`), or whose
  well-known fields have the wrong types, is answered 400 with one log line;
- `app_rate_limited` (Slack telling the app it dropped events over its rate limit: it is an
  Events API request the manifest does not subscribe to) is answered 200 and logged;
- everything else is bolt's, which verifies the signature again and dispatches.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from slack_bolt.adapter.starlette.async_handler import to_starlette_response
from slack_bolt.async_app import AsyncApp, AsyncBoltRequest
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response

from bot.slack.installations import not_connected
from plumbing.urgency import interactive
from timebot.inbound_text import has_control

log = structlog.get_logger("timebot.slack.http")

MAX_BODY = 2 * 1024 * 1024  # Slack's largest payloads (a view's state) are far below this
WINDOW_SECONDS = 300  # Slack's replay window for X-Slack-Request-Timestamp

# Fields bolt reads while it builds a request's context, and the JSON types Slack sends them as.
_OBJECTS = ("event", "view", "container", "message", "enterprise", "state")
_OBJECT_OR_TEXT = ("user", "team", "channel", "enterprise")
_TEXTS = ("type", "event_id", "trigger_id", "command", "user_id", "team_id", "channel_id",
          "enterprise_id", "response_url", "callback_id", "api_app_id")
_LISTS_OF_OBJECTS = ("actions", "authorizations")


class Malformed(Exception):
    """The body is not one Slack sends; the message says why (one log line)."""


def signature_valid(secret: str, body: bytes, timestamp: str | None,
                    signature: str | None, now_s: float) -> bool:
    """Slack's v0 signature over `v0:<timestamp>:<body>`, within the replay window."""
    if not timestamp or not signature or not timestamp.isdigit():
        return False
    if abs(now_s - int(timestamp)) > WINDOW_SECONDS:
        return False
    base = b"v0:" + timestamp.encode() + b":" + body
    expected = "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace"))


# Events whose `user` is the user object itself, not an id (bot.slack.away_status reads it).
_USER_OBJECT_EVENTS = ("user_change", "team_join")


def check_shape(body: Any) -> dict[str, Any]:
    """The parsed body when its fields have the types bolt and the listeners rely on."""
    if not isinstance(body, dict):
        raise Malformed(f"body is a JSON {type(body).__name__}, not an object")
    for name in _TEXTS:
        if name in body and not isinstance(body[name], str | None):
            raise Malformed(f"{name} is not a string")
    for name in _OBJECTS:
        if name in body and not isinstance(body[name], dict | None) and (
                name not in _OBJECT_OR_TEXT or not isinstance(body[name], str)):
            raise Malformed(f"{name} is not an object")
    for name in _OBJECT_OR_TEXT:
        if name in body and not isinstance(body[name], dict | str | None):
            raise Malformed(f"{name} is neither an object nor a string")
    for name in _LISTS_OF_OBJECTS:
        value = body.get(name)
        if value is not None and not (
                isinstance(value, list) and all(isinstance(item, dict) for item in value)):
            raise Malformed(f"{name} is not a list of objects")
    _check_identifiers(body)
    if not body.get("type") and not body.get("command") and not body.get("ssl_check"):
        raise Malformed("neither a type nor a command")
    view = body.get("view")
    if isinstance(view, dict):
        for name in ("id", "type", "callback_id", "private_metadata"):
            if name in view and not isinstance(view[name], str | None):
                raise Malformed(f"view.{name} is not a string")
        check_state(view.get("state"), "view.state")
    check_state(body.get("state"), "state")
    event = body.get("event")
    if body.get("type") == "event_callback" and not isinstance(event, dict):
        raise Malformed("an event_callback without an event")
    if isinstance(event, dict):
        for name in ("type", "user", "channel", "text", "ts", "thread_ts", "subtype"):
            if name == "user" and event.get("type") in _USER_OBJECT_EVENTS:
                if not isinstance(event.get("user"), dict):
                    raise Malformed("event.user is not an object")
                continue
            if name in event and not isinstance(event[name], str | None):
                raise Malformed(f"event.{name} is not a string")
    return body


def _check_identifiers(body: dict[str, Any]) -> None:
    """Slack's identifiers (team, user, channel, event, trigger, action) never hold control
    characters; one that does is no request of Slack's (and PostgreSQL refuses a NUL)."""
    named: list[tuple[str, Any]] = [(name, body.get(name)) for name in _TEXTS]
    named += [(f"{name}.id", body[name].get("id")) if isinstance(body.get(name), dict)
              else (name, body.get(name)) for name in _OBJECT_OR_TEXT]
    event = body.get("event")
    if isinstance(event, dict):
        named += [(f"event.{name}", event.get(name))
                  for name in ("type", "user", "channel", "team", "ts", "thread_ts", "subtype")]
    for index, action in enumerate(body.get("actions") or []):
        named += [(f"actions[{index}].{name}", action.get(name))
                  for name in ("action_id", "block_id", "action_ts", "type")]
    for name, value in named:
        if isinstance(value, str) and has_control(value):
            raise Malformed(f"{name} holds a control character")


def check_state(state: Any, where: str) -> None:
    """A view's state as Slack sends it: {values: {block_id: {action_id: {…}}}}."""
    if state is None:
        return
    values = state.get("values") if isinstance(state, dict) else None
    if not isinstance(state, dict) or not isinstance(values, dict | None) or any(
            not isinstance(block, dict) or any(not isinstance(element, dict)
                                               for element in block.values())
            for block in (values or {}).values()):
        raise Malformed(f"{where} is not a view state")


def bolt_request(raw: bytes, request: Request) -> AsyncBoltRequest:
    """The request as bolt parses it (once), its body checked; or Malformed."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise Malformed("body is not UTF-8") from error
    try:
        parsed = AsyncBoltRequest(body=text, query=request.query_params,  # type: ignore[arg-type]
                                  headers=request.headers)  # type: ignore[arg-type]
    except (ValueError, RecursionError) as error:  # JSONDecodeError is a ValueError
        raise Malformed(f"body is not JSON: {type(error).__name__}") from error
    except Exception as error:  # bolt's context building on a shape it did not expect
        raise Malformed(f"{type(error).__name__}: {error}"[:200]) from error
    check_shape(parsed.body)
    return parsed


async def read_bounded(request: Request) -> bytes | None:
    """The body, or None when it is over MAX_BODY (not read further)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def events_endpoint(
    app: AsyncApp | Callable[[AsyncBoltRequest], Awaitable[AsyncApp | None]],
    signing_secret: str,
) -> Callable[[Request], Awaitable[Response]]:
    """`app`, or what routes a request to its installation's app (bot.slack.installations: None,
    a team timebot does not know, is answered "not connected" and never acted on)."""
    async def events(request: Request) -> Response:
        try:
            raw = await read_bounded(request)
        except ClientDisconnect:
            return Response(status_code=400)
        if raw is None:
            log.warning("slack_request_refused", reason="body too large")
            return Response("body too large", status_code=413)
        if not signature_valid(signing_secret, raw, request.headers.get(
                "x-slack-request-timestamp"), request.headers.get("x-slack-signature"),
                time.time()):
            return JSONResponse({"error": "invalid request"}, status_code=401)
        try:
            parsed = bolt_request(raw, request)
        except Malformed as error:
            log.warning("slack_request_malformed", reason=str(error), size=len(raw))
            return Response("malformed request", status_code=400)
        if parsed.body.get("type") == "app_rate_limited":
            log.warning("slack_app_rate_limited", team=parsed.body.get("team_id"),
                        minute=parsed.body.get("minute_rate_limited"))
            return Response(status_code=200)
        with interactive():  # Slack's 3 s, and the person after them (the work after the ack)
            target = app if isinstance(app, AsyncApp) else await app(parsed)
            if target is None:
                return to_starlette_response(not_connected(parsed))
            return to_starlette_response(await target.async_dispatch(parsed))

    return events
