"""The embedded service's own web pages for interactive sign-in and the account (server-rendered,
usable without JavaScript): /signin (e-mail code, passkey, public identity providers),
/sso/... (an organisation's OpenID Connect provider), /account (API key, legacy token,
passkey, sessions; for administrators "Sign in as ..." , single sign-on and the account's
deletion, plus the sections the installer adds), and /favicon.ico. A hosted service has its
own pages."""

from __future__ import annotations

from collections.abc import Sequence

from starlette.routing import BaseRoute

from service.embedded import EmbeddedService
from service.pages.account import account_routes
from service.pages.common import PageContext
from service.pages.config import PagesConfig
from service.pages.joining import joining_routes
from service.pages.passkeys import passkey_routes
from service.pages.public_sso import public_sso_routes
from service.pages.sections import AccountSection
from service.pages.signin import signin_routes
from service.pages.sso import sso_routes


def page_routes(
    service: EmbeddedService, config: PagesConfig, sections: Sequence[AccountSection] = ()
) -> list[BaseRoute]:
    """The pages act on the service's sessions; its sign-in takes their demo mode and URL."""
    signin = service.executor.signin
    signin.demo = config.demo
    signin.secure_cookies = config.public_url.startswith("https://")
    signin.public_url = config.public_url
    pages = PageContext(service, config)
    return [
        *signin_routes(pages),
        *joining_routes(pages),
        *account_routes(pages, sections),
        *passkey_routes(pages),
        *sso_routes(pages),
        *public_sso_routes(pages),
    ]
