"""The headers every HTTP response carries, whichever part answered it (the service's pages,
the one-click links, the outbox, Slack, GraphQL, a 404 or a 500):

- `X-Content-Type-Options: nosniff`: a browser takes each response as its declared type;
- `Content-Security-Policy: frame-ancestors 'none'` (added to a policy the response already
  has) and `X-Frame-Options: DENY` (older browsers): no page of ours is shown in another
  site's frame, so none of its buttons (Approve, Sign out, …) can be clicked through a
  decoy laid over it.

The outermost layer of the app (shell.app), so that it also covers the error responses
Starlette writes itself. uvicorn's `server` header is turned off where uvicorn is configured
(shell.cli, shell.supervisor).
"""

from __future__ import annotations

from typing import Any

CSP = b"content-security-policy"
FRAME_ANCESTORS = b"frame-ancestors 'none'"
FIXED = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
)
_REPLACED = {name for name, _ in FIXED}


def with_frame_ancestors(policy: bytes) -> bytes:
    """`policy` with its frame-ancestors directive (if any) replaced by 'none'."""
    directives = [
        part.strip() for part in policy.split(b";")
        if part.strip() and part.strip().split()[0].lower() != b"frame-ancestors"
    ]
    return b"; ".join([*directives, FRAME_ANCESTORS])


def secured(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """Pure: a response's headers with ours set (replacing the same headers it had)."""
    result: list[tuple[bytes, bytes]] = []
    merged = False
    for name, value in headers:
        lowered = name.lower()
        if lowered in _REPLACED:
            continue
        if lowered == CSP and not merged:
            value, merged = with_frame_ancestors(value), True
        result.append((name, value))
    if not merged:
        result.append((CSP, FRAME_ANCESTORS))
    result.extend(FIXED)
    return result


class ResponseHeaders:
    """ASGI middleware setting `secured` headers on every HTTP response."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_secured(message: Any) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": secured(list(message.get("headers") or ()))}
            await send(message)

        await self.app(scope, receive, send_secured)
