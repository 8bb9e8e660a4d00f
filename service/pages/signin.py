"""GET /signin: the e-mail code form; POST /signin/code asks for a code (requestSignin),
POST /signin/pin enters it (signin) and lands on /account; POST /signout ends the session.
Each runs the GraphQL mutation in-process with the browser's cookies."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from service.pages.common import PageContext, page, with_cookies
from service.signin.web import PENDING_COOKIE

REQUEST = "mutation($email: SvcEmail!) { requestSignin(email: $email) { expire { ts } debugPin } }"
SIGNIN = """mutation($pin: Int!) { signin(pin: $pin) { person { id } } }"""
SIGNOUT = """mutation { signout { person { id } } }"""

SENT = (
    "If {email} belongs to an account, a 6-digit code is on its way there. "
    "It is valid for 5 minutes."
)


def _status(error: str) -> int:
    return 429 if "rate limit" in error else 400


def signin_routes(pages: PageContext) -> list[BaseRoute]:
    def _origin_refused() -> Response:
        message = "This form was posted from another site: nothing was changed."
        return page("signin.html", 403, error=message, step="email", email="")

    async def signin_page(request: Request) -> Response:
        if await pages.signed_in(request) is not None:
            return RedirectResponse("/account", status_code=303)
        step = "code" if request.cookies.get(PENDING_COOKIE) else "email"
        if request.query_params.get("restart"):
            step = "email"
        return page("signin.html", step=step, email="", error=None, notice=None,
                    providers=pages.config.identity_providers)

    async def request_code(request: Request) -> Response:
        if not pages.same_origin(request):
            return _origin_refused()
        form = await request.form()
        email = str(form.get("email") or "").strip()
        if not email:
            return page("signin.html", 400, step="email", email="",
                        error='Enter your e-mail address ("email").')
        outcome = await pages.graphql(request, REQUEST, {"email": email})
        if outcome.error:
            return page("signin.html", _status(outcome.error), step="email", email=email,
                        error=outcome.error)
        pending = outcome.data["requestSignin"]
        response = page(
            "signin.html", step="code", email=email, error=None,
            notice=SENT.format(email=email), debug_pin=pending.get("debugPin"),
        )
        return with_cookies(response, outcome.web)

    async def enter_pin(request: Request) -> Response:
        if not pages.same_origin(request):
            return _origin_refused()
        form = await request.form()
        raw = str(form.get("pin") or "").strip().replace(" ", "")
        if not (raw.isdigit() and len(raw) == 6):
            return page("signin.html", 400, step="code", email="",
                        error='The code ("pin") is the 6 digits from the e-mail.')
        outcome = await pages.graphql(request, SIGNIN, {"pin": int(raw)})
        if outcome.error:
            return page("signin.html", _status(outcome.error), step="code", email="",
                        error=outcome.error)
        return with_cookies(RedirectResponse("/account", status_code=303), outcome.web)

    async def sign_out(request: Request) -> Response:
        fields, refused = await pages.form_check(request)
        if refused:
            return page("signin.html", 403, step="email", email="", error=refused)
        outcome = await pages.graphql(request, SIGNOUT, csrf=fields.get("csrf"))
        return with_cookies(RedirectResponse("/signin", status_code=303), outcome.web)

    return [
        Route("/signin", signin_page, methods=["GET", "HEAD"]),
        Route("/signin/code", request_code, methods=["POST"]),
        Route("/signin/pin", enter_pin, methods=["POST"]),
        Route("/signout", sign_out, methods=["POST"]),
    ]
