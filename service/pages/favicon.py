"""GET /favicon.ico: a clock face in the accent colour, the GraphQL IDE's and the pages' icon
(served by every process, with or without an embedded service)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

FAVICON = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">'
    '<circle cx="16" cy="16" r="14" fill="#1f6feb"/>'
    '<path d="M16 8v8l6 4" stroke="#fff" stroke-width="3" fill="none" '
    'stroke-linecap="round"/></svg>'
)


def favicon_route() -> Route:
    async def favicon(_request: Request) -> Response:
        return Response(
            FAVICON,
            media_type="image/svg+xml",
            headers={"cache-control": "public, max-age=86400"},
        )

    return Route("/favicon.ico", favicon, methods=["GET", "HEAD"])
