"""GET /account: the signed-in person's page (API key, legacy token, passkey, the installer's
sections, sessions; for administrators "Sign in as ...", single sign-on and the account's
deletion). Every POST, a section's too, checks Origin and the session's CSRF token, then
acts and redirects back (303), or shows the page again with the reason it did nothing."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from plumbing.db import unit_of_work
from service.errors import ServiceError
from service.models import AuditTrail, Person
from service.organisation.models import SECRET_MASK
from service.organisation.provisioning import reset_api_key
from service.pages.account_data import account_view, template_values
from service.pages.common import PageContext, page
from service.pages.sections import AccountSection
from service.signin.sessions import SignedIn, revoke

# The legacy interface is the embedded service's (a hosted one has its own token page).
RESET_LEGACY_TOKEN_EXTENSION = "mutation { resetLegacyToken }"

NOTICES = {
    "key": "Your API key was reset: the old key no longer works.",
    "token": "You have a new legacy token: the old one no longer works.",
    "revoked": "The session was revoked.",
    "takeover": "You are now signed in as another person. Stop returns to your account.",
    "stopped": "You are yourself again.",
    "deletion": "The account's deletion is scheduled.",
    "kept": "The account's deletion was cancelled.",
    "sso": "The single sign-on settings were saved.",
}

Action = Callable[[Request, SignedIn, dict[str, str]], Awaitable[str | None]]


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")


def account_routes(pages: PageContext, sections: Sequence[AccountSection]) -> list[BaseRoute]:
    notices = dict(NOTICES)
    for section in sections:
        notices.update(section.notices)

    async def render(
        request: Request, signed_in: SignedIn, status: int = 200, error: str | None = None
    ) -> Response:
        view = await account_view(pages, signed_in, request.query_params.get("q", "").strip())
        notice = notices.get(request.query_params.get("done", ""))
        current = signed_in.row.id
        csrf = pages.csrf_for(request)
        org_id, person_id = signed_in.organisation.id, signed_in.person.id
        fragments = [Markup(await section.render(org_id, person_id, csrf))
                     for section in sections]
        return page(
            "account.html", status,
            **template_values(view, csrf, error=error, notice=notice, sections=fragments,
                              current_session=current, when=_when),
        )

    async def account_page(request: Request) -> Response:
        signed_in = await pages.signed_in(request)
        if signed_in is None:
            return RedirectResponse("/signin", status_code=303)
        return await render(request, signed_in)

    def post(action: Action) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            signed_in = await pages.signed_in(request)
            if signed_in is None:
                return RedirectResponse("/signin", status_code=303)
            fields, refused = await pages.form_check(request)
            if refused:
                return await render(request, signed_in, 403, refused)
            try:
                outcome = await action(request, signed_in, fields)
            except ServiceError as error:
                return await render(request, signed_in, 400, error.message)
            if outcome is None or outcome not in notices:
                return await render(request, signed_in, 400, outcome or "Nothing was done.")
            return RedirectResponse(f"/account?done={outcome}", status_code=303)

        return endpoint

    async def gql(request: Request, fields: dict[str, str], query: str, done: str,
                  variables: dict[str, Any] | None = None) -> str:
        outcome = await pages.graphql(request, query, variables, csrf=fields.get("csrf"))
        return outcome.error or done

    async def reset_key(_request: Request, signed_in: SignedIn, _f: dict[str, str]) -> str:
        if signed_in.took_over_by is not None:
            return "An administrator acting as someone cannot reset their key."
        now = pages.service.clock.now_ms()
        async with unit_of_work(pages.service.sessions) as session:
            person = await session.get(Person, signed_in.person.id)
            assert person is not None
            await reset_api_key(session, person, now)
            session.add(AuditTrail(
                organisation_id=person.organisation_id, operation_name="resetApiKey",
                person_id=person.id, timestamp_ms=now, arguments={},
                response_id=person.id, response_ids=[person.id],
            ))
        return "key"

    async def reset_token(request: Request, signed_in: SignedIn, fields: dict[str, str]) -> str:
        if signed_in.took_over_by is not None:
            return "An administrator acting as someone cannot reset their token."
        return await gql(request, fields, RESET_LEGACY_TOKEN_EXTENSION, "token")

    async def revoke_session(_r: Request, signed_in: SignedIn, fields: dict[str, str]) -> str:
        async with unit_of_work(pages.service.sessions) as session:
            await revoke(session, signed_in.owner, fields.get("session_id", ""),
                         pages.service.clock.now_ms())
        return "revoked"

    def section_action(section: AccountSection) -> Action:
        async def act(_r: Request, signed_in: SignedIn, fields: dict[str, str]) -> str:
            return await section.handle(signed_in.organisation.id, signed_in.person.id, fields)

        return act

    async def takeover(request: Request, _s: SignedIn, fields: dict[str, str]) -> str:
        query = "mutation($id: SvcId!) { startTakeover(targetId: $id) { person { id } } }"
        return await gql(request, fields, query, "takeover", {"id": fields.get("target_id", "")})

    async def stop(request: Request, _s: SignedIn, fields: dict[str, str]) -> str:
        return await gql(request, fields, "mutation { stopTakeover { person { id } } }", "stopped")

    async def deletion(request: Request, _s: SignedIn, fields: dict[str, str]) -> str:
        if fields.get("action") == "schedule":
            return await gql(request, fields, "mutation { scheduleOrganisationDeletion { id } }",
                             "deletion")
        if fields.get("action") == "cancel":
            return await gql(request, fields, "mutation { cancelOrganisationDeletion { id } }",
                             "kept")
        return 'Invalid "action": schedule or cancel.'

    async def save_sso(request: Request, _s: SignedIn, fields: dict[str, str]) -> str:
        custom: dict[str, Any] | None = None
        if fields.get("issuer", "").strip():
            custom = {
                "issuer": fields.get("issuer", "").strip(),
                "clientId": fields.get("client_id", "").strip(),
                "clientSecret": fields.get("client_secret", "") or SECRET_MASK,
                "ssoOnly": fields.get("sso_only") == "on",
            }
        domains = [d.strip() for d in fields.get("domains", "").split(",") if d.strip()]
        linked = {"domains": domains, "autoUser": fields.get("auto_user") == "on"}
        query = ("mutation($c: SvcCustomSSOInput, $g: SvcGoogleSSOInput!) { "
                 "editCustomSSO(customSSO: $c) { id } editGoogleSSO(google: $g) { id } }")
        outcome = await pages.graphql(request, query, {"c": custom, "g": linked},
                                      csrf=fields.get("csrf"))
        return outcome.error or "sso"

    return [
        Route("/account", account_page, methods=["GET", "HEAD"]),
        Route("/account/sso", post(save_sso), methods=["POST"]),
        Route("/account/api-key/reset", post(reset_key), methods=["POST"]),
        Route("/account/legacy-token/reset", post(reset_token), methods=["POST"]),
        Route("/account/sessions/revoke", post(revoke_session), methods=["POST"]),
        *(Route(section.path, post(section_action(section)), methods=["POST"])
          for section in sections),
        Route("/account/takeover", post(takeover), methods=["POST"]),
        Route("/account/takeover/stop", post(stop), methods=["POST"]),
        Route("/account/deletion", post(deletion), methods=["POST"]),
    ]
