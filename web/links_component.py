"""The one-click link pages (/a, /r, /s, /prefs: web.links; /report: web.report_page)
installed into the app, with their templates (web/templates/links/, an admin's
`<data dir>/templates/` first)."""

from __future__ import annotations

from pathlib import Path

from starlette.routing import BaseRoute

from timebot.process.runtime import Runtime
from timebot.templating import Templates
from web.links import Links
from web.report_page import ReportPage

TEMPLATES = Path(__file__).resolve().parent / "templates" / "links"


def install_links(runtime: Runtime, routes: list[BaseRoute]) -> Links:
    templates = Templates(TEMPLATES, runtime.settings.data_dir)
    links = Links(runtime, templates)
    routes.extend(links.routes())
    routes.extend(ReportPage(runtime, templates).routes())
    return links
