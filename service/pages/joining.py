"""The invitation link and the sign-up pages.

GET /join/<invitation id>?token=... (the link of the invitation e-mail) shows whom the
invitation is for and hands its token to the browser as a cookie; opening it changes nothing
(a mail scanner may open links). POST /join/<invitation id> runs `join` with that cookie and
lands on /account, signed in as the invited person. GET /signup, POST /signup/code
(requestSignup) and POST /signup/pin (signup) create an organisation. Each action is the
GraphQL mutation, run in-process with the browser's cookies.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from plumbing.ids import is_id
from service.pages.common import PageContext, page, with_cookies
from service.people.invitations import INVITATION_COOKIE, NOT_VALID, expiry_label, view_link
from service.people.signup import SIGNUP_COOKIE

JOIN = """mutation($o: SvcId!, $i: SvcId!) {
  join(organisationId: $o, invitationId: $i) { person { id } } }"""
REQUEST = """mutation($organisation: SvcName!, $name: SvcName!, $email: SvcEmail!,
  $country: SvcCountry) { requestSignup(organisation: $organisation, name: $name,
  email: $email, country: $country) { expire { ts } debugPin } }"""
SIGNUP = """mutation($pin: Int!) { signup(pin: $pin) { person { id } } }"""
LINK_COOKIE_SECONDS = 3600
OTHER_SITE = "This form was posted from another site: nothing was changed."
SIGNUP_FIELDS = ("organisation", "name", "email", "country")


def _status(error: str) -> int:
    return 429 if "rate limit" in error.lower() else 400


def joining_routes(pages: PageContext) -> list[BaseRoute]:
    async def join_page(request: Request) -> Response:
        invitation_id = request.path_params["invitation_id"]
        token = request.query_params.get("token", "")
        if not (is_id(invitation_id) and token):
            return page("join.html", 404, error=NOT_VALID, can_join=False)
        async with pages.service.read_sessions() as session:
            view = await view_link(session, invitation_id, token,
                                   pages.service.clock.now_ms())
        if view.invitation is None or view.organisation is None or view.person is None:
            return page("join.html", 404, error=view.problem, can_join=False)
        response = page(
            "join.html", 410 if view.problem else 200, error=view.problem,
            can_join=view.problem is None, organisation=view.organisation.name,
            organisation_id=view.organisation.id, invitation_id=view.invitation.id,
            person_name=view.person.name, email=view.person.email,
            expires=expiry_label(view.invitation.expires_ms),
        )
        if view.problem is None:
            response.headers.append("set-cookie", pages.service.executor.signin.set_cookie(
                INVITATION_COOKIE, token, LINK_COOKIE_SECONDS))
        return response

    async def join(request: Request) -> Response:
        if not pages.same_origin(request):
            return page("join.html", 403, error=OTHER_SITE, can_join=False)
        form = await request.form()
        variables = {"o": str(form.get("organisationId") or ""),
                     "i": request.path_params["invitation_id"]}
        if not (is_id(variables["o"]) and is_id(variables["i"])):
            return page("join.html", 400, error=NOT_VALID, can_join=False)
        outcome = await pages.graphql(request, JOIN, variables)
        if outcome.error:
            return page("join.html", _status(outcome.error), error=outcome.error,
                        can_join=False)
        return with_cookies(RedirectResponse("/account", status_code=303), outcome.web)

    async def signup_page(request: Request) -> Response:
        step = "code" if request.cookies.get(SIGNUP_COOKIE) else "form"
        if request.query_params.get("restart"):
            step = "form"
        return page("signup.html", step=step, values={}, error=None, notice=None)

    async def request_code(request: Request) -> Response:
        if not pages.same_origin(request):
            return page("signup.html", 403, step="form", values={}, error=OTHER_SITE)
        form = await request.form()
        values = {name: str(form.get(name) or "").strip() for name in SIGNUP_FIELDS}
        variables: dict[str, object] = {**values, "country": values["country"] or None}
        outcome = await pages.graphql(request, REQUEST, variables)
        if outcome.error:
            return page("signup.html", _status(outcome.error), step="form", values=values,
                        error=outcome.error)
        pending = outcome.data["requestSignup"]
        response = page("signup.html", step="code", values=values, error=None,
                        notice=f"A 6-digit code is on its way to {values['email']}.",
                        debug_pin=pending.get("debugPin"))
        return with_cookies(response, outcome.web)

    async def enter_pin(request: Request) -> Response:
        if not pages.same_origin(request):
            return page("signup.html", 403, step="form", values={}, error=OTHER_SITE)
        form = await request.form()
        raw = str(form.get("pin") or "").strip().replace(" ", "")
        if not (raw.isdigit() and len(raw) == 6):
            return page("signup.html", 400, step="code", values={},
                        error='The code ("pin") is the 6 digits from the e-mail.')
        outcome = await pages.graphql(request, SIGNUP, {"pin": int(raw)})
        if outcome.error:
            return page("signup.html", _status(outcome.error), step="code", values={},
                        error=outcome.error)
        return with_cookies(RedirectResponse("/account", status_code=303), outcome.web)

    return [
        Route("/join/{invitation_id}", join_page, methods=["GET", "HEAD"]),
        Route("/join/{invitation_id}", join, methods=["POST"]),
        Route("/signup", signup_page, methods=["GET", "HEAD"]),
        Route("/signup/code", request_code, methods=["POST"]),
        Route("/signup/pin", enter_pin, methods=["POST"]),
    ]
