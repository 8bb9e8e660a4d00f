"""Installs the Teams front into the one HTTP app when TEAMS_APP_ID is set (with
TEAMS_APP_PASSWORD or TEAMS_APP_CERTIFICATE): POST /teams/messages, the admin-consent routes
(where the sign-in pages are), and what the other Teams parts build on (`teams_of`): the
connector, the tenants and users, the identity, the invoke handlers. Without TEAMS_APP_ID
nothing is installed: /teams/messages is 404."""

from __future__ import annotations

from dataclasses import dataclass

import httpx
import structlog
from starlette.routing import BaseRoute, Route

from bot.teams.activities import ActivityWork
from bot.teams.auth import ActivityVerifier
from bot.teams.chat import QuickChat
from bot.teams.connector import AppTokens, Connector, Credentials
from bot.teams.consent import consent_routes
from bot.teams.endpoint import InvokeHandlers, messages_endpoint
from bot.teams.endpoints import TeamsEndpoints, UntrustedUrl
from bot.teams.graph import GraphClient
from bot.teams.identity import TeamsIdentity
from bot.teams.tenants import TeamsTenants
from timebot.connect_pages import WhoIs
from timebot.errors import ConfigError
from timebot.process.runtime import Runtime

log = structlog.get_logger("timebot.teams")

MESSAGES_PATH = "/teams/messages"


@dataclass(frozen=True)
class TeamsFront:
    """A running Teams front: what its parts use."""

    app_id: str
    endpoints: TeamsEndpoints
    connector: Connector
    tenants: TeamsTenants
    identity: TeamsIdentity
    invokes: InvokeHandlers
    work: ActivityWork
    graph: GraphClient  # Microsoft Graph as the app, in each tenant (away status)


_FRONTS: dict[int, TeamsFront] = {}


def teams_of(runtime: Runtime) -> TeamsFront | None:
    """The Teams front of a running timebot (None when Teams is not configured)."""
    return _FRONTS.get(id(runtime))


def build_front(runtime: Runtime, http: httpx.AsyncClient) -> TeamsFront:
    settings = runtime.settings
    assert settings.teams_app_id is not None
    if not (settings.teams_app_password or settings.teams_app_certificate):
        raise ConfigError("TEAMS_APP_ID needs TEAMS_APP_PASSWORD or TEAMS_APP_CERTIFICATE")
    try:
        endpoints = TeamsEndpoints.of(settings.teams_api_url)
    except UntrustedUrl as error:
        raise ConfigError(str(error)) from error
    credentials = Credentials.of(settings.teams_app_id, settings.teams_app_password,
                                 settings.teams_app_certificate)
    connector = Connector(http, endpoints, AppTokens(http, endpoints, credentials))
    tenants = TeamsTenants(runtime.state_sessions, runtime.read_sessions, runtime.clock)
    identity = TeamsIdentity(tenants, runtime.directory, connector, settings.public_url)
    work = ActivityWork(tenants, identity, connector, endpoints, QuickChat(runtime))
    return TeamsFront(settings.teams_app_id, endpoints, connector, tenants, identity,
                      InvokeHandlers(), work, GraphClient(http, endpoints, credentials))


def install_teams(runtime: Runtime, routes: list[BaseRoute], who_is: WhoIs | None) -> None:
    settings = runtime.settings
    if not settings.teams_app_id:
        return
    http = httpx.AsyncClient(timeout=httpx.Timeout(10.0, connect=5.0))
    front = build_front(runtime, http)
    verifier = ActivityVerifier(http, front.endpoints, front.app_id)
    routes.append(Route(MESSAGES_PATH, messages_endpoint(verifier, front.invokes,
                                                         front.work.later), methods=["POST"]))
    if who_is is not None:
        routes.extend(consent_routes(front.tenants, front.endpoints, front.app_id,
                                     settings.public_url, settings.secret_key, who_is))
    else:  # no sign-in pages here (a hosted service): tenants are served, not connected
        log.warning("teams_connect_unavailable", reason="no sign-in pages in this process")
    _FRONTS[id(runtime)] = front

    async def stop(_runtime: Runtime) -> None:
        await front.work.stop()
        await http.aclose()
        _FRONTS.pop(id(runtime), None)

    runtime.on_stop.append(stop)
    log.info("teams_installed", api=front.endpoints.base or "microsoft")
