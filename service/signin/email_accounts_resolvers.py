"""The accounts (organisations) of an e-mail address: getAccounts, lookupEmail,
checkEmailExists.

An address is a person's in each organisation that has them. Nobody learns another address's
organisations: getAccounts and lookupEmail answer for the caller's own address only (any other
is refused), and checkEmailExists tells whether someone of the caller's own organisation has
the address (what the people list shows them anyway). lookupEmail's `redirectUrl` is the
single sign-on start of an organisation that allows no e-mail code; `checkExternal` asks for
no directory outside the service (the embedded service knows none).
"""

from __future__ import annotations

from typing import Any

from ariadne import QueryType
from sqlalchemy import exists, select

from service.errors import PermissionDenied
from service.graphql.context import RequestContext
from service.models import Organisation, Person
from service.signin.codes import normalise_email
from service.signin.models import Passkey
from service.signin.sso import blocks_email_code, initiate_path

query = QueryType()

OWN_ONLY = "the accounts of an e-mail address are shown to that address's own person only"


def _own_address(context: RequestContext, email: str) -> str:
    address = normalise_email(email)
    if address != (context.person.email or "").strip().lower():
        raise PermissionDenied(OWN_ONLY)
    return address


async def _accounts(context: RequestContext, address: str) -> list[dict[str, Any]]:
    has_passkey = exists().where(Passkey.person_id == Person.id)
    rows = (await context.session.execute(
        select(Person.email, Person.created_ms, Organisation, has_passkey)
        .join(Organisation, Organisation.id == Person.organisation_id)
        .where(Person.email == address, Person.archived.is_(False))
        .order_by(Organisation.name, Organisation.id)
    )).all()
    return [
        {"id": organisation.id, "email": email, "organisationName": organisation.name,
         "organisationId": organisation.id, "timestamp": created_ms,
         "hasPasskey": bool(passkey), "organisation": organisation}
        for email, created_ms, organisation, passkey in rows
    ]


@query.field("getAccounts")
async def resolve_get_accounts(_root: Any, info: Any, email: str) -> list[dict[str, Any]]:
    context: RequestContext = info.context
    return await _accounts(context, _own_address(context, email))


@query.field("lookupEmail")
async def resolve_lookup_email(
    _root: Any, info: Any, email: str, checkExternal: bool | None = None
) -> dict[str, Any]:
    context: RequestContext = info.context
    accounts = await _accounts(context, _own_address(context, email))
    redirect = next(
        (initiate_path(account["organisationId"]) for account in accounts
         if blocks_email_code(account["organisation"])),
        None,
    )
    public_url = context.signin_config.public_url if context.signin_config else ""
    return {"accounts": accounts, "redirectUrl": f"{public_url}{redirect}" if redirect else None}


@query.field("checkEmailExists")
async def resolve_check_email_exists(_root: Any, info: Any, email: str) -> bool:
    context: RequestContext = info.context
    address = normalise_email(email)
    found = await context.session.scalar(
        select(Person.id).where(Person.organisation_id == context.org_id,
                                Person.email == address).limit(1)
    )
    return found is not None


BINDABLES = [query]
