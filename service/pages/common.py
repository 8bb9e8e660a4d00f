"""What the sign-in and account pages share: templates, the browser's session, the CSRF and
Origin checks of every form post, and in-process GraphQL with the browser's credentials (so
that a page's action is the same operation, with the same rights and audit entry, as the
GraphQL mutation)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from plumbing.peers import is_local_request
from service.embedded import EmbeddedService
from service.errors import ServiceError
from service.graphql.execution import GraphQLResponse
from service.pages.config import PagesConfig
from service.signin.sessions import SignedIn, by_token
from service.signin.web import SESSION_COOKIE, WebExchange, csrf_matches, csrf_token

TEMPLATES = Environment(
    loader=FileSystemLoader(str(Path(__file__).resolve().parent / "templates")),
    autoescape=select_autoescape(default=True),
)


def page(name: str, status: int = 200, **values: Any) -> HTMLResponse:
    html = TEMPLATES.get_template(name).render(**values)
    return HTMLResponse(
        html,
        status_code=status,
        headers={
            "cache-control": "no-store",
            "x-frame-options": "DENY",
            "referrer-policy": "same-origin",
        },
    )


@dataclass
class GraphQLOutcome:
    data: dict[str, Any]
    error: str | None
    web: WebExchange


class PageContext:
    """What every page acts on: the embedded service and the pages' configuration."""

    def __init__(self, service: EmbeddedService, config: PagesConfig) -> None:
        self.service = service
        self.config = config

    def exchange(self, request: Request, csrf: str | None = None) -> WebExchange:
        return WebExchange(
            config=self.service.executor.signin,
            client_ip=request.client.host if request.client else "",
            user_agent=request.headers.get("user-agent", ""),
            local=is_local_request(request.scope),
            cookies=dict(request.cookies),
            csrf_offered=csrf,
        )

    async def signed_in(self, request: Request) -> SignedIn | None:
        token = request.cookies.get(SESSION_COOKIE)
        if not token:
            return None
        async with self.service.read_sessions() as session:
            try:
                return await by_token(session, token, self.service.clock.now_ms())
            except ServiceError:
                return None

    def csrf_for(self, request: Request) -> str:
        return csrf_token(request.cookies.get(SESSION_COOKIE, ""))

    def same_origin(self, request: Request) -> bool:
        """A form post from one of our own pages: its Origin (when the browser sends one) is
        this server as the browser reached it, or the public URL."""
        origin = request.headers.get("origin")
        if origin is None or origin == "null":
            return origin is None
        own = {f"{request.url.scheme}://{request.headers.get('host', '')}"}
        public = urlsplit(self.config.public_url)
        own.add(f"{public.scheme}://{public.netloc}")
        return origin in own

    async def form_check(self, request: Request) -> tuple[dict[str, str], str | None]:
        """The form's fields, and why it is refused (None when it may act): Origin, then
        the CSRF token tied to the session cookie."""
        form = await request.form()
        fields = {key: value for key, value in form.items() if isinstance(value, str)}
        if not self.same_origin(request):
            return fields, "This form was posted from another site: nothing was changed."
        token = request.cookies.get(SESSION_COOKIE)
        if not token or not csrf_matches(token, fields.get("csrf")):
            return fields, (
                "This form has expired or did not come from this page (CSRF token): "
                "nothing was changed. Reload the page and try again."
            )
        return fields, None

    async def graphql(
        self,
        request: Request,
        query: str,
        variables: dict[str, Any] | None = None,
        csrf: str | None = None,
    ) -> GraphQLOutcome:
        """Run an operation in-process as the browser: its session cookie (with the CSRF
        token the form carried) or, for the sign-in mutations, no credentials at all."""
        web = self.exchange(request, csrf)
        response: GraphQLResponse = await self.service.executor.run(
            {"query": query, "variables": variables or {}}, None, web=web
        )
        if web.mail_waiting:
            web.config.mail_queued()
        body = response.body
        errors = body.get("errors") or []
        error = str(errors[0]["message"]) if errors else None
        if error is None and body.get("permissionsErrors"):
            error = "You are not allowed to do that."
        return GraphQLOutcome(body.get("data") or {}, error, web)


def with_cookies(response: Response, web: WebExchange) -> Response:
    for cookie in web.set_cookies:
        response.headers.append("set-cookie", cookie)
    return response
