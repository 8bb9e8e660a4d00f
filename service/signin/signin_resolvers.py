"""requestSignin / signin (no API key needed: they run for a browser without a session),
signout, startTakeover / stopTakeover (a browser session's own operations)."""

from __future__ import annotations

from typing import Any

from ariadne import MutationType
from sqlalchemy.ext.asyncio import AsyncSession

from service.errors import RuleViolation
from service.graphql.context import RequestContext
from service.signin.codes import WrongCode, check_code, count_wrong_code, request_code
from service.signin.sessions import (
    SESSION_MS,
    SignedIn,
    open_session,
    sign_out,
    start_takeover,
    stop_takeover,
)
from service.signin.web import PENDING_COOKIE, SESSION_COOKIE, WebExchange

mutation = MutationType()

NEEDS_BROWSER = "This operation needs a browser (the sign-in cookies), not an API key."
NEEDS_SESSION = (
    "This operation acts on a browser session: sign in at /signin (an API key has no session)."
)


def _web(context: RequestContext) -> WebExchange:
    if context.web is None:
        raise RuleViolation(NEEDS_BROWSER)
    return context.web


def _signed_in(context: RequestContext) -> SignedIn:
    if context.signed_in is None:
        raise RuleViolation(NEEDS_SESSION)
    return context.signed_in


def authentified(signed_in: SignedIn) -> dict[str, Any]:
    return {
        "organisation": signed_in.organisation,
        "person": signed_in.person,
        "expire": signed_in.row.expires_ms,
        "tookOverBy": signed_in.took_over_by,
    }


@mutation.field("requestSignin")
async def resolve_request_signin(
    _root: Any, info: Any, email: str, accountId: str | None = None
) -> dict[str, Any]:
    context: RequestContext = info.context
    web = _web(context)
    context.skip_audit = True  # no organisation to record it in (nor to reveal)
    requested = await request_code(
        context.session, email, accountId, web.client_ip, context.now_ms,
        web.config.public_url,
    )
    web.set(PENDING_COOKIE, requested.cookie, 600)
    web.mail_waiting = True  # handed to the outbox as soon as the request commits
    return {
        "expire": requested.expires_ms,
        # The demo's code, to a browser on this machine alone: anyone else reads it in mail.
        "debugPin": requested.pin if web.config.demo and web.local else None,
    }


@mutation.field("signin")
async def resolve_signin(_root: Any, info: Any, pin: int) -> dict[str, Any]:
    context: RequestContext = info.context
    web = _web(context)
    try:
        person = await check_code(
            context.session, web.cookies.get(PENDING_COOKIE), pin, web.client_ip, context.now_ms
        )
    except WrongCode as wrong:
        pending_id = wrong.pending_id

        async def count(session: AsyncSession) -> None:
            await count_wrong_code(session, pending_id)

        context.failure_writes.append(count)
        raise
    opened = await open_session(
        context.session, person, context.now_ms, web.user_agent, web.client_ip
    )
    # From here on the request is this person's (the audit row, the fields below).
    context.organisation = opened.signed_in.organisation
    context.person = person
    context.signed_in = opened.signed_in
    web.set(SESSION_COOKIE, opened.token, SESSION_MS // 1000)
    web.clear(PENDING_COOKIE)
    return authentified(opened.signed_in)


@mutation.field("signout")
async def resolve_signout(_root: Any, info: Any) -> dict[str, Any]:
    context: RequestContext = info.context
    signed_in = _signed_in(context)
    await sign_out(context.session, signed_in, context.now_ms)
    if context.web is not None:
        context.web.clear(SESSION_COOKIE)
    return authentified(signed_in)


@mutation.field("startTakeover")
async def resolve_start_takeover(_root: Any, info: Any, targetId: str) -> dict[str, Any]:
    context: RequestContext = info.context
    signed_in = _signed_in(context)
    await start_takeover(context.session, signed_in, targetId)
    context.person = signed_in.owner  # recorded under the administrator
    return authentified(signed_in)


@mutation.field("stopTakeover")
async def resolve_stop_takeover(_root: Any, info: Any) -> dict[str, Any]:
    context: RequestContext = info.context
    signed_in = _signed_in(context)
    await stop_takeover(context.session, signed_in)
    context.person = signed_in.owner  # recorded under the administrator
    return authentified(signed_in)


BINDABLES = [mutation]
