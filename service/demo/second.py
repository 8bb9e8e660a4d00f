"""The demo's second organisation (#27): a small one of its own, to show one timebot serving
two organisations, each with its own Slack workspace (`timebot serve --demo`; the workspace is
the loopback fake of shell/demo_slack.py). Created once; found again by its marker."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from service.models import Organisation, Person, PersonManager
from service.organisation.keyed_settings import APPROVAL_STAGES, set_value
from service.organisation.provisioning import add_person, create_organisation, ensure_api_key
from service.people.models import ROLE_EMPLOYEE
from service.timesheets.stages import parse_stage_inputs

SECOND_ORGANISATION = "Globex Labs (demo)"
SECOND_MARKER = "timebotDemoSecond"  # key in Organisation.settings
ADMIN = ("Hedy Lamarr", "hedy@globex.example")
STAFF = [("Ken Thompson", "ken@globex.example")]


@dataclass(frozen=True)
class SecondDemo:
    organisation_id: str
    name: str
    admin_id: str
    people: list[tuple[str, str, str, str]]  # name, e-mail, role, apikey


async def seed_second_demo(session: AsyncSession, now_ms: int) -> SecondDemo:
    """The second demo organisation, created unless the database has it: Hedy administers
    it and approves Ken's timesheets (his people manager)."""
    found = [org for org in await session.scalars(select(Organisation))
             if (org.settings or {}).get(SECOND_MARKER)]
    if not found:
        created = await create_organisation(session, SECOND_ORGANISATION, *ADMIN, now_ms)
        organisation = created.organisation
        organisation.settings = {**(organisation.settings or {}), SECOND_MARKER: True}
        set_value(organisation, APPROVAL_STAGES,
                  parse_stage_inputs([{"type": "ppm", "quorum": "any"}]))
        for name, email in STAFF:
            person, _key = await add_person(session, organisation.id, name, email,
                                            ROLE_EMPLOYEE, now_ms)
            session.add(PersonManager(organisation_id=organisation.id,
                                      manager_id=created.admin.id, person_id=person.id,
                                      created_ms=now_ms))
        await session.flush()
        found = [organisation]
    organisation = found[0]
    people = list(await session.scalars(select(Person).where(
        Person.organisation_id == organisation.id).order_by(Person.created_ms, Person.id)))
    admin = next(person for person in people if person.email == ADMIN[1])
    return SecondDemo(organisation.id, organisation.name, admin.id, [
        (person.name, person.email, "admin" if person.id == admin.id else "employee",
         await ensure_api_key(session, person, now_ms)) for person in people])
