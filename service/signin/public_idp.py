"""Sign-in with a public identity provider (the deployment's Google or Microsoft client): the
person a provider-verified e-mail address names, in whichever organisation has them.

The address must equal an active person's e-mail (the most recently added, or the one in the
organisation the browser named with `account`), in an organisation whose custom single
sign-on does not take every other method away. Otherwise, when exactly one organisation links
the address's domain and creates users on first login, a new employee there (rate-limited
with the organisation's additions). Every other case is one refusal, the same whether or not
the address names someone somewhere.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from service.errors import RuleViolation
from service.models import Organisation, Person
from service.signin.sso import blocks_other_methods, create_on_first_login, creates_users_for

REFUSED = (
    "{label} confirmed the address {address}, but no timebot account lets it sign in with "
    "{label}: ask your administrator to add you with this address."
)
AMBIGUOUS = (
    "Several timebot accounts take in new users from {domain}: use your account's sign-in "
    "link (it names the account)."
)


async def person_for_provider(
    session: AsyncSession, label: str, email: str, name: str, account_id: str | None,
    now_ms: int,
) -> Person:
    address = email.strip().lower()
    statement = (
        select(Person, Organisation)
        .join(Organisation, Organisation.id == Person.organisation_id)
        .where(Person.email == address)
        .order_by(Person.created_ms.desc())
    )
    if account_id:
        statement = statement.where(Person.organisation_id == account_id)
    known: set[str] = set()
    for person, organisation in (await session.execute(statement)).tuples():
        known.add(organisation.id)
        if not person.archived and not blocks_other_methods(organisation):
            return person
    candidates = [
        organisation for organisation in await _linking_organisations(session, account_id)
        if organisation.id not in known and not blocks_other_methods(organisation)
        and creates_users_for(organisation, address)
    ]
    if len(candidates) > 1:
        raise RuleViolation(AMBIGUOUS.format(domain=address.rpartition("@")[2]))
    if not candidates:
        raise RuleViolation(REFUSED.format(label=label, address=address))
    return await create_on_first_login(session, candidates[0], address, name, now_ms)


async def _linking_organisations(session: AsyncSession, account_id: str | None
                                 ) -> list[Organisation]:
    """The organisations with single sign-on settings (the linked domains live in JSON, read
    here rather than queried: few organisations have any)."""
    statement = select(Organisation).where(Organisation.sso.is_not(None))
    if account_id:
        statement = statement.where(Organisation.id == account_id)
    return [organisation for organisation in (await session.scalars(statement))
            if (organisation.sso or {}).get("google")]
