"""invitePersons / getInvitation / join (an administrator's invitation, and its link joining
as the invited person), requestSignup / signup (a new organisation and its administrator).

requestSignup, signup and join run without credentials, as requestSignin and signin do
(service/graphql/credentials.py): they act on the browser's cookies. The rules are in
service/people/invitations.py and service/people/signup.py.
"""

from __future__ import annotations

from typing import Any

from ariadne import MutationType, ObjectType, QueryType
from sqlalchemy.ext.asyncio import AsyncSession

from service.access import PEOPLE, guard_administrators, has
from service.errors import BadInput, NotFound, PermissionDenied, RuleViolation
from service.graphql.context import RequestContext
from service.lookup import get_many_in_org
from service.models import Organisation, Person
from service.organisation import create_organisation
from service.people import invitations, signup
from service.people.checks import require_admin
from service.people.invitation_models import Invitation
from service.people.models import ROLE_ADMIN
from service.signin import SESSION_COOKIE, SESSION_MS, SignedIn, WebExchange, open_session
from service.structure import check_unique_ids

query = QueryType()
mutation = MutationType()
invitation_type = ObjectType("SvcInvitation")

MAX_INVITED = 5_000
NEEDS_BROWSER = "This operation needs a browser (its cookies), not an API key alone."


def _web(context: RequestContext) -> WebExchange:
    if context.web is None:
        raise RuleViolation(NEEDS_BROWSER)
    return context.web


def _public_url(context: RequestContext) -> str:
    return context.signin_config.public_url if context.signin_config else ""


def _mail_written(context: RequestContext) -> None:
    if context.web is not None:
        context.web.mail_waiting = True  # handed to the outbox as soon as the request commits


def _authentified(signed_in: SignedIn) -> dict[str, Any]:
    return {"organisation": signed_in.organisation, "person": signed_in.person,
            "expire": signed_in.row.expires_ms, "tookOverBy": signed_in.took_over_by}


async def _open(context: RequestContext, web: WebExchange, person: Person,
                method: str) -> dict[str, Any]:
    """A browser session as `person`: the request is theirs from here on (its audit row)."""
    opened = await open_session(context.session, person, context.now_ms, web.user_agent,
                                web.client_ip, method=method)
    context.organisation = opened.signed_in.organisation
    context.person = person
    context.signed_in = opened.signed_in
    web.set(SESSION_COOKIE, opened.token, SESSION_MS // 1000)
    return _authentified(opened.signed_in)


@mutation.field("invitePersons")
async def resolve_invite_persons(_root: Any, info: Any, ids: list[str | None]) -> dict[str, Any]:
    context: RequestContext = info.context
    require_admin(context, "invite people")
    if len(ids) > MAX_INVITED:
        raise BadInput("ids", f"at most {MAX_INVITED} people in one call")
    check_unique_ids([value for value in ids if value is not None], "ids")
    persons = await get_many_in_org(context.session, Person, context.org_id, ids, "ids",
                                    "person")
    guard_administrators(context, persons, "invite an administrator")
    for index, person in enumerate(persons):
        if person.archived:
            raise BadInput(f"ids[{index}]", f"{person.name} is archived: unarchive them first")
    outcome = await invitations.invite(context.session, context.organisation, context.person,
                                       persons, context.now_ms, _public_url(context))
    if outcome.invited:
        _mail_written(context)
    return {"invited": outcome.invited, "alreadyInOrg": outcome.already,
            "noEmail": outcome.no_email}


@query.field("getInvitation")
async def resolve_get_invitation(_root: Any, info: Any, id: str) -> Invitation:
    context: RequestContext = info.context
    invitation = await context.session.get(Invitation, id)
    if invitation is None or invitation.organisation_id != context.org_id:
        raise NotFound("id", id, "invitation")
    if invitation.person_id != context.person.id and not has(
        context, PEOPLE
    ):
        raise PermissionDenied(
            "an invitation is seen by the invited person and by who may invite people "
            "(the 'people' permission)"
        )
    return invitation


@invitation_type.field("organisation")
async def resolve_invitation_organisation(invitation: Invitation, info: Any) -> Organisation:
    context: RequestContext = info.context
    if context.organisation is not None and context.org_id == invitation.organisation_id:
        return context.organisation
    found = await context.session.get(Organisation, invitation.organisation_id)
    assert found is not None
    return found


@invitation_type.field("expiration")
def resolve_invitation_expiration(invitation: Invitation, _info: Any) -> int:
    return invitation.expires_ms


@mutation.field("join")
async def resolve_join(
    _root: Any, info: Any, organisationId: str, invitationId: str
) -> dict[str, Any]:
    context: RequestContext = info.context
    web = _web(context)
    person = await invitations.accept(
        context.session, organisationId, invitationId,
        web.cookies.get(invitations.INVITATION_COOKIE), context.now_ms,
    )
    answer = await _open(context, web, person, "invitation")
    web.clear(invitations.INVITATION_COOKIE)
    return answer


@mutation.field("requestSignup")
async def resolve_request_signup(
    _root: Any, info: Any, organisation: str, name: str, email: str, country: Any = None
) -> dict[str, Any]:
    context: RequestContext = info.context
    web = _web(context)
    context.skip_audit = True  # no organisation yet to record it in
    requested = await signup.request_signup(
        context.session, organisation, name, email, country, web.client_ip, context.now_ms,
        _public_url(context),
    )
    web.set(signup.SIGNUP_COOKIE, requested.cookie, 600)
    _mail_written(context)
    return {
        "expire": requested.expires_ms,
        # The demo's code, to a browser on this machine alone: anyone else reads it in mail.
        "debugPin": requested.pin if web.config.demo and web.local else None,
    }


@mutation.field("signup")
async def resolve_signup(_root: Any, info: Any, pin: int) -> dict[str, Any]:
    context: RequestContext = info.context
    web = _web(context)
    try:
        pending = await signup.check_code(
            context.session, web.cookies.get(signup.SIGNUP_COOKIE), pin, context.now_ms
        )
    except signup.WrongSignupCode as wrong:
        pending_id = wrong.pending_id

        async def count(session: AsyncSession) -> None:
            await signup.count_wrong_code(session, pending_id)

        context.failure_writes.append(count)
        raise
    made = await create_organisation(context.session, pending.organisation_name, pending.name,
                                     pending.email, context.now_ms)
    made.admin.role = made.roles[ROLE_ADMIN]  # loaded: the fields below read it
    if pending.country:
        made.organisation.settings = {**(made.organisation.settings or {}),
                                      "country": pending.country}
    pending.organisation_id = made.organisation.id
    answer = await _open(context, web, made.admin, "signup")
    web.clear(signup.SIGNUP_COOKIE)
    return answer


BINDABLES = [query, mutation, invitation_type]
