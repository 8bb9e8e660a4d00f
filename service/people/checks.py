"""What changes to people check, below the person resolvers: administrators only, a person or
an unarchived role of the organisation by id, an e-mail address no other person uses, and an
organisation that keeps at least one active administrator."""

from __future__ import annotations

from sqlalchemy import func, select

from service.access import PEOPLE, guard_administrators, require
from service.errors import BadInput, PermissionDenied, RuleViolation
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import Person, Role
from service.people.models import ROLE_ADMIN


def require_admin(context: RequestContext, what: str = "edit people") -> None:
    """People are added, edited, archived and deleted with the people permission
    (administrators have it)."""
    require(context, PEOPLE, what)


async def person_by_id(context: RequestContext, person_id: str, argument: str = "id") -> Person:
    """A person to change (guarded: see guard_administrators)."""
    person = await get_in_org(context.session, Person, context.org_id, person_id, argument,
                              "person")
    guard_administrators(context, [person])
    return person


async def active_role_by_id(
    context: RequestContext, role_id: str, argument: str = "roleId"
) -> Role:
    role = await get_in_org(context.session, Role, context.org_id, role_id, argument, "role")
    if role.kind == ROLE_ADMIN and not context.is_admin:
        raise PermissionDenied("only an administrator may give the administrator's role")
    if role.archived:
        raise BadInput(argument, f"the role {role.name!r} is archived")
    return role


async def check_email_free(
    context: RequestContext, email: str, except_id: str | None = None, argument: str = "email"
) -> None:
    statement = select(Person.id).where(
        Person.organisation_id == context.org_id, Person.email == email
    )
    if except_id is not None:
        statement = statement.where(Person.id != except_id)
    if (await context.session.scalars(statement.limit(1))).first() is not None:
        raise BadInput(argument, f"another person of the organisation already uses {email!r}")


async def ensure_an_admin_remains(
    context: RequestContext, leaving_ids: set[str], verb: str
) -> None:
    """Refuses a change that would leave the organisation without an active administrator."""
    statement = (
        select(func.count())
        .select_from(Person)
        .join(Role, Role.id == Person.role_id)
        .where(
            Person.organisation_id == context.org_id,
            Person.archived.is_(False),
            Role.kind == ROLE_ADMIN,
        )
    )
    if leaving_ids:
        statement = statement.where(Person.id.not_in(leaving_ids))
    if int(await context.session.scalar(statement) or 0) == 0:
        raise RuleViolation(
            f"cannot {verb}: the organisation must keep at least one active administrator"
        )


def is_active_admin(person: Person) -> bool:
    return not person.archived and person.role.kind == ROLE_ADMIN
