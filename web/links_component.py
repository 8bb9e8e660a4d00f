"""The one-click link pages (/a, /r, /s, /prefs: web.links) installed into the app, with
their templates (web/templates/links/, an admin's `<data dir>/templates/` first)."""

from __future__ import annotations

from pathlib import Path

from starlette.routing import BaseRoute

from timebot.runtime import Runtime
from timebot.templating import Templates
from web.links import Links

TEMPLATES = Path(__file__).resolve().parent / "templates" / "links"


def install_links(runtime: Runtime, routes: list[BaseRoute]) -> Links:
    links = Links(runtime, Templates(TEMPLATES, runtime.settings.data_dir))
    routes.extend(links.routes())
    return links
