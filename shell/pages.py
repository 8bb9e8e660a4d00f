"""The embedded service's sign-in and account pages, installed beside it, with timebot's
preferences section on /account; /favicon.ico in every process."""

from __future__ import annotations

from starlette.routing import BaseRoute

from service.embedded import EmbeddedService
from service.pages import page_routes
from service.pages.config import PagesConfig
from service.pages.favicon import favicon_route
from timebot.runtime import Runtime
from web.preferences import PreferencesSection


def install_pages(
    runtime: Runtime, service: EmbeddedService | None, routes: list[BaseRoute]
) -> None:
    routes.append(favicon_route())
    if service is None:
        return
    settings = runtime.settings
    config = PagesConfig(
        settings.public_url, settings.secret_key, settings.demo, settings.identity_providers
    )
    preferences = PreferencesSection(runtime)
    routes.extend(page_routes(service, config, [preferences]))
