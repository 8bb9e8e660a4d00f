"""POST /graphql (the interface) and GET /graphql (the IDE), as Starlette routes."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route, request_response
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

from plumbing.peers import is_local_request
from service.errors import ServiceError
from service.graphql.execution import Executor
from service.graphql.limits import MAX_BODY_BYTES
from service.signin.sessions import by_token
from service.signin.web import (
    CSRF_HEADER,
    SESSION_COOKIE,
    SigninConfig,
    WebExchange,
    csrf_token,
    parse_cookies,
)

# Bodies larger than this (bytes), or of unknown length, are read only after the key was
# found valid: without one, a large request costs a lookup, not its reading and decoding.
CHECK_KEY_FIRST_BYTES = 16_384

IDE_DIR = Path(__file__).resolve().parent.parent / "static" / "graphiql"

IDE_MISSING = """<!doctype html><title>GraphQL IDE</title>
<p>The GraphQL IDE has not been built. In a checkout run <code>make ide</code> (part of
<code>make run</code>); <code>pip install</code> of the package builds it (Node.js and npm
needed).</p>"""


def _ide_page(executor: Executor) -> Any:
    async def ide_page(request: Request) -> Response:
        """The IDE; for a signed-in browser with its session's CSRF token (and name) in
        <meta> tags, so that the IDE's requests use the session instead of a pasted key."""
        index = IDE_DIR / "index.html"
        if not index.is_file():
            return HTMLResponse(IDE_MISSING)
        html = index.read_text(encoding="utf-8")
        token = request.cookies.get(SESSION_COOKIE)
        if token:
            async with executor.read_sessions() as session:
                try:
                    signed_in = await by_token(session, token, executor.clock.now_ms())
                except ServiceError:
                    signed_in = None
            if signed_in is not None:
                meta = (
                    f'<meta name="timebot-csrf" content="{csrf_token(token)}" />'
                    f'<meta name="timebot-person" content="{escape(signed_in.person.name)}" />'
                )
                html = html.replace("</head>", f"{meta}</head>", 1)
        return HTMLResponse(html, headers={"cache-control": "no-store"})

    return ide_page


class _GraphQLEndpoint:
    """The /graphql route's ASGI app. A POST (every GraphQL request) is answered directly:
    the body read from `receive`, the JSON answer sent as Starlette's JSONResponse would
    render it, without a Request, a Response and the per-request exception wrapper around
    them. GET (and HEAD) serve the IDE page the ordinary Starlette way."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        self.ide = request_response(_ide_page(executor))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST":
            await self.ide(scope, receive, send)
            return
        apikey = None
        length = None
        web = exchange_of(scope, self.executor.signin)
        for name, value in scope["headers"]:
            if name == b"apikey" and apikey is None:
                apikey = value.decode("latin-1")
            elif name == b"content-length":
                length = int(value) if value.isdigit() else None
        if length is not None and length > MAX_BODY_BYTES:
            await _send_json(send, 413, _TOO_LARGE)
            return
        # A large body is read and decoded only for a valid key (one lookup first).
        key_checked = length is None or length > CHECK_KEY_FIRST_BYTES
        if key_checked:
            refusal = await self.executor.key_refusal(apikey, web)
            if refusal is not None:
                await _send_json(send, refusal.status, refusal.body)
                return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the client is gone: nobody to answer
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_BODY_BYTES:  # refused unread (uvicorn closes the connection)
                await _send_json(send, 413, _TOO_LARGE)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        try:
            payload = json.loads(b"".join(chunks) or b"null")
        except ValueError:  # not JSON, not UTF-8, or a number of over 4300 digits
            await _send_json(send, 400, {"errors": [{"message": "Body is not valid JSON."}]})
            return
        except RecursionError:
            await _send_json(send, 400, _TOO_DEEP)
            return
        result = await self.executor.run(payload, apikey, key_checked=key_checked, web=web)
        if web.mail_waiting:
            web.config.mail_queued()
        await _send_json(send, result.status, result.body, web.set_cookies)


_TOO_LARGE = {
    "errors": [
        {"message": f"The request body is larger than {MAX_BODY_BYTES} bytes (maxBodyBytes)."}
    ]
}
_TOO_DEEP = {
    "errors": [{"message": "Body is not valid JSON: it nests too deeply (maxInputDepth)."}]
}


def exchange_of(scope: Scope, config: SigninConfig) -> WebExchange:
    """The browser's side of a request: cookies, CSRF header, client address."""
    cookies: list[str] = []
    csrf = None
    user_agent = ""
    for name, value in scope["headers"]:
        if name == b"cookie":
            cookies.append(value.decode("latin-1"))
        elif name == CSRF_HEADER.encode():
            csrf = value.decode("latin-1")
        elif name == b"user-agent":
            user_agent = value.decode("latin-1")
    client = scope.get("client")
    return WebExchange(
        config=config,
        client_ip=str(client[0]) if client else "",
        user_agent=user_agent,
        local=is_local_request(scope),
        cookies=parse_cookies("; ".join(cookies)),
        csrf_offered=csrf,
    )


async def _send_json(
    send: Send, status: int, content: Any, cookies: list[str] | None = None
) -> None:
    text = json.dumps(
        content, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")
    )
    try:
        body = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate echoed in an error: written as \uXXXX
        body = json.dumps(content, allow_nan=False, separators=(",", ":")).encode("ascii")
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [
            (b"content-length", str(len(body)).encode("latin-1")),
            (b"content-type", b"application/json"),
            *[(b"set-cookie", cookie.encode("latin-1")) for cookie in cookies or ()],
        ],
    })
    await send({"type": "http.response.body", "body": body})


IDE_ASSET_MISSING = (
    "The GraphQL IDE has not been built: in a checkout run `make ide` (part of `make run`).\n"
)


class _IdeAssets:
    """The IDE's script, styles and Monaco workers from IDE_DIR (built by `make ide`; looked
    for at each request, so that a later `make ide` needs no restart). Before the build: 404
    with the hint (StaticFiles alone raises on a missing directory: a 500)."""

    def __init__(self) -> None:
        self._files: StaticFiles | None = None
        self._directory: Path | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        directory = IDE_DIR
        if not directory.is_dir():
            response: Response = PlainTextResponse(IDE_ASSET_MISSING, status_code=404)
            await response(scope, receive, send)
            return
        if self._files is None or self._directory != directory:
            self._files, self._directory = StaticFiles(directory=directory), directory
        await self._files(scope, receive, send)


def graphql_routes(executor: Executor) -> list[BaseRoute]:
    return [
        Route("/graphql", _GraphQLEndpoint(executor), methods=["GET", "POST"]),
        Mount("/graphql-ide", app=_IdeAssets(), name="ide"),
    ]
