"""The demo organisation: a small design-and-engineering studio with a few weeks of history.

`seed_demo` creates it once (it does nothing when the data dir already has it): here the
organisation, its people and who manages whom; its structure (demo_structure), schedule
(demo_schedules), time-off allowance (demo_time_off), history (demo_history), rates
(demo_rates), custom field (demo_custom_fields) and weekly scheduled report (demo_reports)
come from the modules named. One finished
phase, Discovery, shows the entry rules: its time before the current week is locked
(`lockDate`) and its entries need a comment (`forceComment`). The Design team submits monthly
timesheets (its tag's `periodicity`, demo_structure). Everything is written with the models
directly; the records are deterministic for a given `now_ms` (a seeded random generator), so
two fresh seeds at the same instant look alike. `demo_export` describes the seeded organisation.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from service.demo.away import seed_away_approver
from service.demo.custom_fields import seed_custom_fields
from service.demo.history import seed_expenses, seed_time_records
from service.demo.rates import seed_demo_rates
from service.demo.reports import seed_reports
from service.demo.schedules import seed_schedule
from service.demo.seed import DAY_MS, DEMO_CURRENCY, DEMO_TIMEZONE, HISTORY_WEEKS, DemoSeed
from service.demo.structure import seed_projects, seed_tags, seed_tasks, seed_types
from service.demo.time_off import seed_time_off
from service.models import Organisation, PersonManager
from service.organisation.keyed_settings import APPROVAL_STAGES, set_value
from service.organisation.provisioning import add_person, create_organisation
from service.organisation.settings_cascade import set_json
from service.people.models import ROLE_ADMIN, ROLE_EMPLOYEE, ROLE_MANAGER
from service.timesheets.stages import parse_stage_inputs

DEMO_ORGANISATION = "Northwind Studio (demo)"
DEMO_MARKER = "timebotDemo"  # key in Organisation.settings
DEMO_STAGE = {"type": "ppm", "quorum": "any"}  # People managers, any one of them
RULED_PROJECT = "Discovery"  # the project with a lock date and a required comment

# (name, e-mail, role kind); the first is the administrator, then the two approvers.
PEOPLE: tuple[tuple[str, str, str], ...] = (
    ("Ada Lovelace", "ada@northwind.example", ROLE_ADMIN),
    ("Grace Hopper", "grace@northwind.example", ROLE_MANAGER),
    ("Linus Pauling", "linus@northwind.example", ROLE_MANAGER),
    ("Margaret Hamilton", "margaret@northwind.example", ROLE_EMPLOYEE),
    ("Alan Turing", "alan@northwind.example", ROLE_EMPLOYEE),
    ("Katherine Johnson", "katherine@northwind.example", ROLE_EMPLOYEE),
    ("Dorothy Vaughan", "dorothy@northwind.example", ROLE_EMPLOYEE),
    ("Edsger Dijkstra", "edsger@northwind.example", ROLE_EMPLOYEE),
    ("Barbara Liskov", "barbara@northwind.example", ROLE_EMPLOYEE),
)
# People manager (approver) -> the staff they manage.
MANAGES = {
    "grace@northwind.example": (
        "margaret@northwind.example",
        "alan@northwind.example",
        "katherine@northwind.example",
    ),
    "linus@northwind.example": (
        "dorothy@northwind.example",
        "edsger@northwind.example",
        "barbara@northwind.example",
    ),
}


async def find_demo_organisation(session: AsyncSession) -> Organisation | None:
    candidates = await session.scalars(
        select(Organisation).where(Organisation.name == DEMO_ORGANISATION).order_by(
            Organisation.created_ms, Organisation.id
        )
    )
    for organisation in candidates:
        if (organisation.settings or {}).get(DEMO_MARKER):
            return organisation
    return None


def seed_entry_rules(seed: DemoSeed) -> None:
    """Discovery's time before this week's Monday (in the demo's zone) is locked, and its
    entries need a comment."""
    today = dt.datetime.fromtimestamp(seed.now_ms / 1000, seed.zone).date()
    discovery = seed.projects[RULED_PROJECT]
    set_json(discovery, "lockDate", seed.at(today - dt.timedelta(days=today.weekday()), 0))
    set_json(discovery, "forceComment", True)


async def seed_demo(session: AsyncSession, now_ms: int) -> None:
    """Create the demo organisation, unless the database already has it."""
    if await find_demo_organisation(session) is not None:
        return
    seed = DemoSeed(session, now_ms)
    history_start = now_ms - (HISTORY_WEEKS * 7 + 7) * DAY_MS
    admin_name, admin_email, _ = PEOPLE[0]
    created = await create_organisation(
        session, DEMO_ORGANISATION, admin_name, admin_email, history_start
    )
    organisation = created.organisation
    organisation.timezone = DEMO_TIMEZONE
    organisation.currency = DEMO_CURRENCY
    organisation.color = "#0b6e4f"
    organisation.settings = {**(organisation.settings or {}), DEMO_MARKER: True}
    # The approval workflow: each timesheet goes to the owner's people manager (Grace
    # for Engineering, Linus for Design), so that a submission shows the whole loop.
    set_value(organisation, APPROVAL_STAGES, parse_stage_inputs([DEMO_STAGE]))
    seed.org_id = organisation.id
    seed.persons[admin_email.split("@")[0]] = created.admin
    for name, email, kind in PEOPLE[1:]:
        person, _key = await add_person(session, seed.org_id, name, email, kind, history_start)
        person.timezone = DEMO_TIMEZONE
        seed.persons[email.split("@")[0]] = person
    created.admin.timezone = DEMO_TIMEZONE
    for manager, staff in MANAGES.items():
        for member in staff:
            seed.add(
                PersonManager(
                    organisation_id=seed.org_id,
                    manager_id=seed.persons[manager.split("@")[0]].id,
                    person_id=seed.persons[member.split("@")[0]].id,
                    created_ms=history_start,
                )
            )
    await seed_tags(seed, history_start)
    await seed_projects(seed, history_start)
    seed_entry_rules(seed)
    await seed_tasks(seed, history_start)
    seed_types(seed)
    await seed_custom_fields(session, seed.org_id, seed.projects)
    oldest = seed.working_days()[-1]
    await seed_schedule(session, organisation,
                        seed.at(oldest - dt.timedelta(days=oldest.weekday()), 0))
    await session.flush()
    seed_time_off(session, seed.org_id, seed.absence_types["Vacation"], now_ms, seed.zone)
    seed_time_records(seed)
    seed_expenses(seed)
    await seed_away_approver(seed, organisation)
    await seed_demo_rates(session, seed.org_id, history_start, seed.persons, seed.projects,
                          created.roles.get(ROLE_MANAGER))
    await seed_reports(session, seed.org_id, seed.persons["grace"], seed.persons["linus"],
                       now_ms)
    await session.flush()
