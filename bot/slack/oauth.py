"""Installing the Slack app into a workspace for an organisation (OAuth v2), when
SLACK_CLIENT_ID and SLACK_CLIENT_SECRET are set:

- GET /slack/install?organisation=<id>: an administrator of that organisation, signed in
  (the shell hands `timebot.connect_pages.SignedIn`, who a browser's session is), gets a
  fresh state (bound to the organisation and to them, single-use, `STATE_SECONDS`), a cookie
  holding it (the browser that started is the one that finishes) and a redirect to Slack's
  authorize page.
- GET /slack/oauth_redirect?code=…&state=…: the state checked against the cookie and consumed,
  `oauth.v2.access` called (on TIMEBOT_SLACK_API_URL when set), the installation stored for
  the organisation (bot.slack.oauth_store; a team connected to another organisation is refused),
  and `on_installed` told (bot.slack.installations starts serving it), then back to /account.

bolt's `AsyncOAuthFlow` runs the flow, configured here explicitly: nothing is read from bolt's
own environment lookups (SLACK_SCOPES, SLACK_REDIRECT_URI, its file stores in $HOME).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from slack_bolt.error import BoltError
from slack_bolt.oauth.async_callback_options import (
    AsyncCallbackOptions,
    AsyncFailureArgs,
    AsyncSuccessArgs,
)
from slack_bolt.oauth.async_oauth_flow import AsyncOAuthFlow
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.oauth import OAuthStateUtils
from slack_sdk.oauth.installation_store import Installation
from slack_sdk.web.async_client import AsyncWebClient
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.slack.oauth_store import STATE_SECONDS, InstallationStore, StateStore, TakenOver
from timebot.connect_pages import SignedIn, WhoIs, administrator, page

log = structlog.get_logger("timebot.slack.oauth")

# What the app asks for (deploy/slack-manifest.yaml lists the same, a test checks it).
BOT_SCOPES = ("chat:write", "commands", "im:history", "users:read", "users:read.email")
INSTALL_PATH = "/slack/install"
REDIRECT_PATH = "/slack/oauth_redirect"
STATE_COOKIE = "timebot-slack-oauth-state"
DONE = "/account?done=slack"

REASONS = {
    "access_denied": (200, "The installation was cancelled in Slack."),
    "invalid_browser": (400, "This installation was not started in this browser: start it "
                             "again from your account page."),
    "invalid_state": (401, "This installation link is not valid (used already, or expired): "
                           "start it again from your account page."),
    "missing_code": (400, "Slack did not send the installation's code."),
    "invalid_code": (401, "Slack did not accept the installation's code: start it again."),
    "taken_over": (409, "This Slack workspace is already connected to another organisation. "
                        "It can serve one organisation only."),
}


OnInstalled = Callable[[str, str], Awaitable[None]]


def authorize_url(api_url: str | None) -> str:
    """Slack's authorize page beside its Web API (https://slack.com/api/ →
    https://slack.com/oauth/v2/authorize; a test's fake the same way)."""
    base = (api_url or "https://slack.com/api/").rstrip("/").removesuffix("/api")
    return f"{base}/oauth/v2/authorize"


async def _success(args: AsyncSuccessArgs) -> BoltResponse:
    return BoltResponse(status=303, body="", headers={
        "Location": DONE,
        "Set-Cookie": args.settings.state_utils.build_set_cookie_for_deletion()})


async def _failure(args: AsyncFailureArgs) -> BoltResponse:
    reason = "taken_over" if isinstance(args.error, TakenOver) else args.reason
    status, text = REASONS.get(reason, (500 if reason == "storage_error" else 400,
                                        "The installation failed: start it again."))
    log.warning("slack_install_failed", reason=reason)
    body = page(status, "Slack not connected", text).body
    return BoltResponse(status=status, body=bytes(body).decode(),
                        headers={"Content-Type": "text/html; charset=utf-8"})


class StateCookie(OAuthStateUtils):  # type: ignore[misc]
    """The state's cookie: Secure when TIMEBOT_PUBLIC_URL is https (a plain-http development
    server's browser would not send it back otherwise), SameSite=Lax (Slack's redirect back is
    a top-level navigation: it is sent)."""

    def __init__(self, secure: bool) -> None:
        super().__init__(cookie_name=STATE_COOKIE, expiration_seconds=STATE_SECONDS)
        self.flags = "; Secure" if secure else ""

    def build_set_cookie_for_new_state(self, state: str) -> str:
        return (f"{STATE_COOKIE}={state}{self.flags}; HttpOnly; SameSite=Lax; Path=/; "
                f"Max-Age={STATE_SECONDS}")

    def build_set_cookie_for_deletion(self) -> str:
        return f"{STATE_COOKIE}={self.flags}; HttpOnly; SameSite=Lax; Path=/; Max-Age=0"


class TimebotOAuthFlow(AsyncOAuthFlow):
    """bolt's flow whose state carries an organisation, and whose installation is stored for
    it (bot.slack.oauth_store)."""

    def __init__(self, *, client: AsyncWebClient, settings: AsyncOAuthSettings,
                 states: StateStore, installations: InstallationStore,
                 on_installed: OnInstalled) -> None:
        super().__init__(client=client, settings=settings)
        self.states = states
        self.installations = installations
        self.on_installed = on_installed

    async def issue_new_state(self, request: AsyncBoltRequest) -> str:
        installer = request.context.get("installer")
        assert isinstance(installer, SignedIn)
        return await self.states.issue_for(installer.organisation_id, installer.person_id)

    async def store_installation(self, request: AsyncBoltRequest,
                                 installation: Installation) -> None:
        state = (request.query.get("state") or [""])[0]
        issued = await self.states.issued(state)
        if issued is None:  # consumed just before by this very request: cannot happen
            raise BoltError("the state was not consumed")
        key = await self.installations.save_for(installation, issued)
        await self.on_installed(key, issued.organisation_id)


def oauth_flow(
    *, client_id: str, client_secret: str, public_url: str, api_url: str | None,
    states: StateStore, installations: InstallationStore, on_installed: OnInstalled,
) -> TimebotOAuthFlow:
    client = (AsyncWebClient(base_url=api_url.rstrip("/") + "/") if api_url
              else AsyncWebClient())
    settings = AsyncOAuthSettings(
        client_id=client_id, client_secret=client_secret, scopes=list(BOT_SCOPES),
        user_scopes=[], redirect_uri=public_url.rstrip("/") + REDIRECT_PATH,
        install_path=INSTALL_PATH, redirect_uri_path=REDIRECT_PATH,
        install_page_rendering_enabled=False, authorization_url=authorize_url(api_url),
        callback_options=AsyncCallbackOptions(success=_success, failure=_failure),
        installation_store=installations, installation_store_bot_only=True,
        state_store=states, state_cookie_name=STATE_COOKIE,
        state_expiration_seconds=STATE_SECONDS, state_validation_enabled=True,
    )
    settings.state_utils = StateCookie(public_url.startswith("https://"))
    return TimebotOAuthFlow(client=client, settings=settings, states=states,
                            installations=installations, on_installed=on_installed)


def _bolt_request(request: Request, **context: Any) -> AsyncBoltRequest:
    bolt = AsyncBoltRequest(body="", query=request.url.query,
                            headers={k: v for k, v in request.headers.items()})
    for name, value in context.items():
        bolt.context[name] = value
    return bolt


def _response(answer: BoltResponse) -> Response:
    response = Response(answer.body, status_code=answer.status)
    for name, values in answer.headers.items():
        for value in values:
            if name.lower() == "set-cookie":
                response.headers.append("set-cookie", value)
            else:
                response.headers[name] = value
    return response


def oauth_routes(flow: TimebotOAuthFlow, who_is: WhoIs) -> list[BaseRoute]:
    async def install(request: Request) -> Response:
        installer = await administrator(
            request, who_is, "Slack not connected", "Only an administrator of the "
            "organisation can connect a Slack workspace to it.", "slack_install_refused")
        if isinstance(installer, Response):
            return installer
        return _response(await flow.handle_installation(
            _bolt_request(request, installer=installer)))

    async def redirect(request: Request) -> Response:
        try:
            answer = await flow.handle_callback(_bolt_request(request))
        except Exception:  # Slack unreachable, the database away: said, not a traceback
            log.exception("slack_install_failed")
            return page(502, "Slack not connected",
                        "Slack could not be reached to finish the installation: try again.")
        return _response(answer)

    return [Route(INSTALL_PATH, install, methods=["GET"]),
            Route(REDIRECT_PATH, redirect, methods=["GET"])]
