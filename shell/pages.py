"""The embedded service's sign-in and account pages, installed beside it, with timebot's
preferences section on /account; /favicon.ico in every process."""

from __future__ import annotations

from starlette.requests import Request
from starlette.routing import BaseRoute

from service.embedded import EmbeddedService
from service.models import Person
from service.pages import page_routes
from service.pages.common import PageContext
from service.pages.config import PagesConfig
from service.pages.favicon import favicon_route
from service.people.models import ROLE_ADMIN
from timebot.connect_pages import SignedIn, WhoIs
from timebot.process.runtime import Runtime
from web.preferences import PreferencesSection


def install_pages(
    runtime: Runtime, service: EmbeddedService | None, routes: list[BaseRoute]
) -> WhoIs | None:
    """The pages; and who a browser's session is (Slack's OAuth install asks), None without
    the embedded service's sign-in."""
    routes.append(favicon_route())
    if service is None:
        return None
    settings = runtime.settings
    config = PagesConfig(
        settings.public_url, settings.secret_key, settings.demo, settings.identity_providers
    )
    pages = PageContext(service, config)

    async def who_is(request: Request) -> SignedIn | None:
        signed_in = await pages.signed_in(request)
        if signed_in is None:
            return None
        # The one who signed in (an administrator acting as someone installs nothing).
        acting = signed_in.person if signed_in.took_over_by is None else None
        return SignedIn(signed_in.organisation.id, signed_in.person.id,
                         acting is not None and acting.role.kind == ROLE_ADMIN)

    async def is_admin(organisation_id: str, person_id: str) -> bool:
        async with service.read_sessions() as session:
            person = await session.get(Person, person_id)
            return (person is not None and person.organisation_id == organisation_id
                    and person.role.kind == ROLE_ADMIN)

    oauth = bool(settings.slack_client_id and settings.slack_client_secret)
    teams = bool(settings.teams_app_id)
    preferences = PreferencesSection(runtime, is_admin=is_admin if oauth or teams else None,
                                     slack_installs=oauth, teams=teams)
    routes.extend(page_routes(service, config, [preferences]))
    return who_is
