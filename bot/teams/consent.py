"""Connecting an organisation's Microsoft 365 tenant (admin consent), when TEAMS_APP_ID is set:

- GET /teams/connect?organisation=<id>: an administrator of that organisation, signed in, is
  sent to Microsoft's admin-consent page for the app, with a state naming the organisation and
  them (timebot.secret_key.signed_state, `STATE_SECONDS`).
- GET /teams/consent?tenant=…&admin_consent=True&state=…: Microsoft sends them back; the state
  checked (signature, age, the same administrator signed in), the tenant recorded as the
  organisation's (bot.teams.tenants: a tenant serving another organisation is refused), then
  back to /account.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from urllib.parse import urlencode

import structlog
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from bot.teams.endpoints import TeamsEndpoints
from bot.teams.tenants import TakenOver, TeamsTenants
from timebot.connect_pages import WhoIs, administrator, page
from timebot.secret_key.signed_state import SignedState

log = structlog.get_logger("timebot.teams.consent")

CONNECT_PATH = "/teams/connect"
CALLBACK_PATH = "/teams/consent"
DONE = "/account?done=teams"
STATE_SECONDS = 600
TENANT_ID = re.compile(r"[0-9A-Za-z-]{1,64}")  # Entra ID tenant ids are GUIDs


def connect_url(organisation_id: str) -> str:
    """The link an administrator's account page offers."""
    return CONNECT_PATH + "?" + urlencode({"organisation": organisation_id})


class ConsentState:
    """The state of one administrator's consent round trip: their organisation and them."""

    def __init__(self, secret_key: str) -> None:
        self.signed = SignedState(secret_key, "teams-consent", STATE_SECONDS)

    def issue(self, organisation_id: str, person_id: str, now_s: float) -> str:
        return self.signed.issue({"o": organisation_id, "p": person_id}, now_s)

    def read(self, state: str, now_s: float) -> tuple[str, str] | None:
        """(organisation, person) of a state issued here and not expired."""
        data = self.signed.read(state, now_s)
        if data is None:
            return None
        return str(data.get("o") or ""), str(data.get("p") or "")


def consent_routes(tenants: TeamsTenants, endpoints: TeamsEndpoints, app_id: str,
                   public_url: str, secret_key: str, who_is: WhoIs,
                   now_s: Callable[[], float] = time.time) -> list[BaseRoute]:
    states = ConsentState(secret_key)

    async def connect(request: Request) -> Response:
        who = await administrator(request, who_is, "Teams not connected", "Only an "
                                  "administrator of the organisation can connect its "
                                  "Microsoft 365 tenant.", "teams_connect_refused")
        if isinstance(who, Response):
            return who
        query = urlencode({"client_id": app_id, "redirect_uri": public_url + CALLBACK_PATH,
                           "state": states.issue(who.organisation_id, who.person_id,
                                                 now_s())})
        return RedirectResponse(endpoints.consent + "?" + query, status_code=303)

    async def callback(request: Request) -> Response:
        params = request.query_params
        read = states.read(params.get("state", ""), now_s())
        who = await who_is(request)
        if read is None or who is None or (who.organisation_id, who.person_id) != read \
                or not who.is_admin:
            log.warning("teams_consent_refused", reason="state not valid for this session")
            return page(401, "Teams not connected", "This link is not valid (expired, or "
                        "started by someone else): start again from your account page.")
        tenant_id = params.get("tenant", "").strip()
        if params.get("error") or params.get("admin_consent", "").lower() != "true" \
                or not TENANT_ID.fullmatch(tenant_id):
            return page(200, "Teams not connected", "Microsoft 365 did not give its consent: "
                        "nothing was connected.")
        try:
            await tenants.connect(tenant_id, read[0], read[1])
        except TakenOver as refusal:
            log.warning("teams_consent_refused", reason=str(refusal), tenant=tenant_id)
            return page(409, "Teams not connected", "This Microsoft 365 tenant is already "
                        "connected to another organisation (or yours to another tenant): one "
                        "tenant serves one organisation.")
        log.info("teams_tenant_connected", tenant=tenant_id, organisation=read[0])
        return RedirectResponse(DONE, status_code=303)

    return [Route(CONNECT_PATH, connect, methods=["GET"]),
            Route(CALLBACK_PATH, callback, methods=["GET"])]
