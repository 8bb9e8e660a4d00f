"""The web front of interactive sign-in: GET /signin and GET /account (server-rendered,
usable without JavaScript), and /favicon.ico."""

from __future__ import annotations

from starlette.routing import BaseRoute

from service.embedded import EmbeddedService
from timebot.runtime import Runtime


def install_web(
    runtime: Runtime, service: EmbeddedService | None, routes: list[BaseRoute]
) -> None:
    """Beside an embedded service only: the pages act on its sessions."""
    from timebot.web.account import account_routes
    from timebot.web.common import WebFront, favicon_route
    from timebot.web.passkeys import passkey_routes
    from timebot.web.public_sso import public_sso_routes
    from timebot.web.signin import signin_routes
    from timebot.web.sso import sso_routes

    routes.append(favicon_route())
    if service is None:
        return
    settings = runtime.settings
    service.executor.signin.demo = settings.demo
    service.executor.signin.secure_cookies = settings.public_url.startswith("https://")
    service.executor.signin.public_url = settings.public_url
    front = WebFront(runtime, service)
    routes.extend(signin_routes(front))
    routes.extend(account_routes(front))
    routes.extend(passkey_routes(front))
    routes.extend(sso_routes(front))
    routes.extend(public_sso_routes(front))
