"""What the pages that connect a chat platform to an organisation share (Slack's
/slack/install, Teams' /teams/connect): who a browser's session is, as the shell resolves it
(`WhoIs`), the gate they open only to a signed-in administrator of the organisation the link
names (`administrator`), and the short page that says why not (`page`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from html import escape

import structlog
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

log = structlog.get_logger("timebot.connect_pages")


@dataclass(frozen=True)
class SignedIn:
    """Who a browser's session is: their organisation, themselves, and whether they
    administer it."""

    organisation_id: str
    person_id: str
    is_admin: bool


WhoIs = Callable[[Request], Awaitable[SignedIn | None]]


def page(status: int, title: str, text: str) -> HTMLResponse:
    return HTMLResponse(
        f"<!doctype html><html><head><meta charset=utf-8><title>{escape(title)}</title></head>"
        f"<body><h1>{escape(title)}</h1><p>{escape(text)}</p>"
        f'<p><a href="/account">Back to your account</a></p></body></html>', status_code=status)


async def administrator(request: Request, who_is: WhoIs, title: str, refusal: str,
                        event: str) -> SignedIn | Response:
    """The signed-in administrator of the organisation `?organisation=` names; else the
    answer: a redirect to sign in, or a 403 page (`title`, `refusal`), logged as `event`."""
    who = await who_is(request)
    if who is None:
        return RedirectResponse("/signin", status_code=303)
    organisation = request.query_params.get("organisation", "")
    if not who.is_admin or organisation != who.organisation_id:
        log.warning(event, reason="not an administrator of it", person=who.person_id,
                    organisation=organisation[:64])
        return page(403, title, refusal)
    return who
