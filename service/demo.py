"""The demo organisation: a small design-and-engineering studio with a few weeks of history.

`seed_demo` creates it once (it does nothing when the data dir already has it); `export_demo`
describes it as `timebot demo export` prints it (the shape is fixed by the outside contract).
Everything is written with the models directly; the records are deterministic for a given
`now_ms` (a seeded random generator), so two fresh seeds at the same instant look alike.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from service.approvals.settings import APPROVAL_STAGES, set_value
from service.approvals.stages import parse_stage_inputs
from service.demo_rates import seed_demo_rates
from service.demo_schedules import seed_schedule
from service.demo_time_off import seed_time_off
from service.models import (
    AbsenceType,
    ExpenseRecord,
    ExpenseType,
    Organisation,
    Person,
    PersonManager,
    PersonTag,
    Project,
    ProjectCategory,
    ProjectManager,
    ProjectTag,
    Tag,
    TagCategory,
    Task,
    TaskCategory,
    TaskOwner,
    TaskStatus,
    TimeRecord,
)
from service.models.person import ROLE_ADMIN, ROLE_EMPLOYEE, ROLE_MANAGER
from service.models.records import ABSENCE_UNIT_DAY, ABSENCE_UNIT_HOUR
from service.provisioning import add_person, create_organisation, ensure_api_key

DEMO_ORGANISATION = "Northwind Studio (demo)"
DEMO_MARKER = "timebotDemo"  # key in Organisation.settings
DEMO_TIMEZONE = "Europe/Berlin"
DEMO_CURRENCY = "EUR"
HISTORY_WEEKS = 3
DEMO_STAGE = {"type": "ppm", "quorum": "any"}  # People managers, any one of them

HOUR_MS = 3_600_000
MINUTE_MS = 60_000
DAY_MS = 24 * HOUR_MS

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
TEAMS = {
    "Engineering": ("grace", "margaret", "alan", "katherine"),
    "Design": ("linus", "dorothy", "edsger", "barbara"),
}


@dataclass
class _ProjectSpec:
    name: str
    category: str
    children: tuple[_ProjectSpec, ...] = ()
    manager: str | None = None  # e-mail local part
    color: str | None = None


PROJECTS = (
    _ProjectSpec(
        "Harbor Bank",
        "Clients",
        (
            _ProjectSpec(
                "Mobile banking app",
                "Clients",
                (_ProjectSpec("Discovery", "Clients"), _ProjectSpec("Build", "Clients")),
                manager="grace",
                color="#1f77b4",
            ),
            _ProjectSpec("Brand refresh", "Clients", manager="linus", color="#ff7f0e"),
        ),
        color="#1f77b4",
    ),
    _ProjectSpec(
        "Greenfield Foods",
        "Clients",
        (_ProjectSpec("Online shop", "Clients", manager="grace", color="#2ca02c"),),
        color="#2ca02c",
    ),
    _ProjectSpec(
        "Internal",
        "Internal",
        (
            _ProjectSpec("Hiring", "Internal", manager="linus"),
            _ProjectSpec("Training", "Internal"),
            _ProjectSpec("Admin & meetings", "Internal"),
        ),
        color="#7f7f7f",
    ),
)
PROJECT_CATEGORIES = {
    "Clients": ["Client", "Project", "Phase"],
    "Internal": ["Area", "Activity"],
}
TASK_STATUSES = ("To do", "In progress", "In review", "Done")
# (task, planned on project, status, owner local part)
TASKS = (
    ("User research interviews", "Discovery", "Done", "dorothy"),
    ("Account overview screen", "Build", "In progress", "margaret"),
    ("Payments API integration", "Build", "In progress", "alan"),
    ("Accessibility audit", "Build", "To do", "katherine"),
    ("Logo and colour system", "Brand refresh", "In review", "barbara"),
    ("Product catalogue import", "Online shop", "In progress", "katherine"),
    ("Checkout flow", "Online shop", "To do", "edsger"),
    ("Interview candidates", "Hiring", "In progress", "linus"),
)
ABSENCE_TYPES = (
    ("Vacation", ABSENCE_UNIT_DAY, True, "#17becf"),
    ("Sick leave", ABSENCE_UNIT_DAY, True, "#d62728"),
    ("Public holiday", ABSENCE_UNIT_DAY, False, "#9467bd"),
    ("Doctor's appointment", ABSENCE_UNIT_HOUR, False, "#8c564b"),
)
EXPENSE_TYPES = (
    ("Travel", "#1f77b4"),
    ("Meals", "#ff7f0e"),
    ("Software", "#2ca02c"),
    ("Equipment", "#7f7f7f"),
)
# Which leaf projects each person works on (with their tasks, if planned there).
WORKS_ON = {
    "ada": ("Admin & meetings", "Hiring"),
    "grace": ("Build", "Online shop", "Admin & meetings"),
    "linus": ("Brand refresh", "Hiring", "Admin & meetings"),
    "margaret": ("Build", "Training"),
    "alan": ("Build", "Discovery"),
    "katherine": ("Build", "Online shop"),
    "dorothy": ("Discovery", "Brand refresh"),
    "edsger": ("Online shop", "Training"),
    "barbara": ("Brand refresh", "Discovery"),
}
COMMENTS = {
    "Discovery": ("Stakeholder interviews", "Synthesis of research notes", "Journey mapping"),
    "Build": ("Sprint work", "Code review", "Pairing on the API client", "Bug fixing"),
    "Brand refresh": ("Moodboards", "Type explorations", "Client feedback round"),
    "Online shop": ("Catalogue import", "Checkout prototype", "Payment provider call"),
    "Hiring": ("Screening CVs", "Interview", "Hiring debrief"),
    "Training": ("Workshop", "Reading group"),
    "Admin & meetings": ("Team meeting", "Planning", "1:1s", "Invoicing"),
}
# (person local part, absence type, working-day index counted back from yesterday, days)
ABSENCES = (
    ("alan", "Vacation", 7, 3),
    ("dorothy", "Sick leave", 2, 1),
    ("edsger", "Doctor's appointment", 4, 0),
)


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


async def seed_demo(session: AsyncSession, now_ms: int) -> None:
    """Create the demo organisation, unless the database already has it."""
    if await find_demo_organisation(session) is not None:
        return
    await _Seeder(session, now_ms).seed()


class _Seeder:
    def __init__(self, session: AsyncSession, now_ms: int) -> None:
        self.session = session
        self.now_ms = now_ms
        self.random = random.Random(20240601)
        self.zone = ZoneInfo(DEMO_TIMEZONE)
        self.persons: dict[str, Person] = {}  # by e-mail local part
        self.projects: dict[str, Project] = {}
        # Leaf project name -> the tasks planned there, with their owner's e-mail local part.
        self.tasks: dict[str, list[tuple[Task, str]]] = {}
        self.absence_types: dict[str, AbsenceType] = {}
        self.expense_types: dict[str, ExpenseType] = {}
        self.kind_tags: dict[str, Tag] = {}
        self.org_id = ""

    def add(self, *items: Any) -> None:
        self.session.add_all(items)

    async def seed(self) -> None:
        history_start = self.now_ms - (HISTORY_WEEKS * 7 + 7) * DAY_MS
        admin_name, admin_email, _ = PEOPLE[0]
        created = await create_organisation(
            self.session, DEMO_ORGANISATION, admin_name, admin_email, history_start
        )
        organisation = created.organisation
        organisation.timezone = DEMO_TIMEZONE
        organisation.currency = DEMO_CURRENCY
        organisation.color = "#0b6e4f"
        organisation.settings = {**(organisation.settings or {}), DEMO_MARKER: True}
        # The approval workflow: each timesheet goes to the owner's people manager (Grace
        # for Engineering, Linus for Design), so that a submission shows the whole loop.
        set_value(organisation, APPROVAL_STAGES, parse_stage_inputs([DEMO_STAGE]))
        self.org_id = organisation.id
        self.persons[admin_email.split("@")[0]] = created.admin
        for name, email, kind in PEOPLE[1:]:
            person, _key = await add_person(
                self.session, self.org_id, name, email, kind, history_start
            )
            person.timezone = DEMO_TIMEZONE
            self.persons[email.split("@")[0]] = person
        created.admin.timezone = DEMO_TIMEZONE
        for manager, staff in MANAGES.items():
            for member in staff:
                self.add(
                    PersonManager(
                        organisation_id=self.org_id,
                        manager_id=self.persons[manager.split("@")[0]].id,
                        person_id=self.persons[member.split("@")[0]].id,
                        created_ms=history_start,
                    )
                )
        await self._tags(history_start)
        await self._projects(history_start)
        await self._tasks(history_start)
        self._types()
        oldest = self._working_days()[-1]
        await seed_schedule(self.session, organisation,
                            self._at(oldest - dt.timedelta(days=oldest.weekday()), 0))
        await self.session.flush()
        seed_time_off(self.session, self.org_id, self.absence_types["Vacation"], self.now_ms,
                      self.zone)
        self._time_records()
        self._expenses()
        await seed_demo_rates(self.session, self.org_id, history_start, self.persons,
                              self.projects, created.roles.get(ROLE_MANAGER))
        await self.session.flush()

    async def _tags(self, start_ms: int) -> None:
        teams = TagCategory(organisation_id=self.org_id, name="Teams", level_names=["Team"])
        kinds = TagCategory(organisation_id=self.org_id, name="Project kind", level_names=[])
        self.add(teams, kinds)
        await self.session.flush()
        for team, members in TEAMS.items():
            tag = Tag(
                organisation_id=self.org_id, name=team, category_id=teams.id, level=0,
                settings={}, created_ms=start_ms,
            )
            self.add(tag)
            await self.session.flush()
            for member in members:
                self.add(
                    PersonTag(
                        organisation_id=self.org_id, tag_id=tag.id,
                        person_id=self.persons[member].id, start_ms=start_ms,
                    )
                )
        for name in ("Billable", "Non-billable"):
            tag = Tag(
                organisation_id=self.org_id, name=name, category_id=kinds.id, level=0,
                settings={}, created_ms=start_ms,
            )
            self.add(tag)
            self.kind_tags[name] = tag
        await self.session.flush()

    async def _projects(self, start_ms: int) -> None:
        categories: dict[str, ProjectCategory] = {}
        for name, levels in PROJECT_CATEGORIES.items():
            categories[name] = ProjectCategory(
                organisation_id=self.org_id, name=name, level_names=levels
            )
            self.add(categories[name])
        await self.session.flush()

        async def create(spec: _ProjectSpec, parent: Project | None) -> None:
            project = Project(
                organisation_id=self.org_id,
                name=spec.name,
                parent_id=parent.id if parent else None,
                category_id=categories[spec.category].id,
                level=parent.level + 1 if parent else 0,
                color=spec.color or (parent.color if parent else None),
                created_ms=start_ms,
            )
            self.add(project)
            await self.session.flush()
            self.projects[spec.name] = project
            if spec.manager:
                self.add(
                    ProjectManager(
                        organisation_id=self.org_id, project_id=project.id,
                        person_id=self.persons[spec.manager].id,
                    )
                )
            if parent is None:
                kind = "Billable" if spec.category == "Clients" else "Non-billable"
                self.add(
                    ProjectTag(
                        organisation_id=self.org_id, tag_id=self.kind_tags[kind].id,
                        project_id=project.id, start_ms=start_ms,
                    )
                )
            for child in spec.children:
                await create(child, project)

        for spec in PROJECTS:
            await create(spec, None)

    async def _tasks(self, start_ms: int) -> None:
        category = TaskCategory(
            organisation_id=self.org_id, name="Delivery", level_names=["Task", "Subtask"]
        )
        self.add(category)
        await self.session.flush()
        statuses: dict[str, TaskStatus] = {}
        palette = (0x9E9E9E, 0x2196F3, 0xFF9800, 0x4CAF50)
        for position, name in enumerate(TASK_STATUSES):
            statuses[name] = TaskStatus(
                organisation_id=self.org_id, category_id=category.id, name=name,
                color=palette[position], position=position,
            )
            self.add(statuses[name])
        await self.session.flush()
        for position, (name, project_name, status, owner) in enumerate(TASKS):
            task = Task(
                organisation_id=self.org_id,
                name=name,
                category_id=category.id,
                status_id=statuses[status].id,
                project_id=self.projects[project_name].id,
                level=0,
                start_ms=start_ms,
                end_ms=self.now_ms + 14 * DAY_MS,
                effort=float(self.random.choice((8, 16, 24, 40)) * 60),
                position=position,
                created_ms=start_ms,
            )
            self.add(task)
            await self.session.flush()
            self.add(
                TaskOwner(
                    organisation_id=self.org_id, task_id=task.id,
                    person_id=self.persons[owner].id, potential=False, fte_pct=50.0,
                )
            )
            self.tasks.setdefault(project_name, []).append((task, owner))

    def _types(self) -> None:
        for name, unit, costs, color in ABSENCE_TYPES:
            self.absence_types[name] = AbsenceType(
                organisation_id=self.org_id, name=name, unit=unit, involve_costs=costs,
                color=color,
            )
            self.add(self.absence_types[name])
        for name, color in EXPENSE_TYPES:
            self.expense_types[name] = ExpenseType(
                organisation_id=self.org_id, name=name, color=color
            )
            self.add(self.expense_types[name])

    def _working_days(self) -> list[dt.date]:
        """The working days of the last HISTORY_WEEKS weeks, newest first, before today."""
        today = dt.datetime.fromtimestamp(self.now_ms / 1000, self.zone).date()
        days: list[dt.date] = []
        day = today - dt.timedelta(days=1)
        while len(days) < HISTORY_WEEKS * 5:
            if day.weekday() < 5:
                days.append(day)
            day -= dt.timedelta(days=1)
        return days

    def _at(self, day: dt.date, hour: int, minute: int = 0) -> int:
        moment = dt.datetime.combine(day, dt.time(hour, minute), self.zone)
        return int(moment.timestamp() * 1000)

    def _time_records(self) -> None:
        days = self._working_days()
        absent: dict[tuple[str, dt.date], tuple[AbsenceType, int]] = {}
        for who, type_name, back, length in ABSENCES:
            absence_type = self.absence_types[type_name]
            if length == 0:  # a couple of hours, the rest of the day worked
                absent[(who, days[back])] = (absence_type, 2 * HOUR_MS)
            for index in range(back, back + length):
                absent[(who, days[index])] = (absence_type, 8 * HOUR_MS)
        for who, person in self.persons.items():
            for day in days:
                hour, minute = self.random.choice((8, 9, 9, 9)), self.random.choice((0, 15, 30))
                cursor = self._at(day, hour, minute)
                worked_target = self.random.choice((7.5, 8, 8, 8, 8.5)) * HOUR_MS
                absence = absent.get((who, day))
                if absence is not None:
                    absence_type, duration = absence
                    self._record(
                        person, cursor, duration, absence_type=absence_type,
                        comment=absence_type.name,
                    )
                    if duration >= 8 * HOUR_MS:
                        continue
                    cursor += duration
                    worked_target -= duration
                self._work_day(who, person, day, cursor, int(worked_target))

    def _work_day(self, who: str, person: Person, day: dt.date, cursor: int, target: int) -> None:
        projects = WORKS_ON[who]
        blocks = self.random.choice((2, 3, 3))
        remaining = target
        for index in range(blocks):
            if index == blocks - 1:
                duration = remaining
            else:
                share = self.random.choice((0.3, 0.4, 0.5))
                duration = int(target * share) // (15 * MINUTE_MS) * (15 * MINUTE_MS)
            remaining -= duration
            if duration <= 0:
                continue
            project_name = projects[0] if index == 0 else self.random.choice(projects)
            project = self.projects[project_name]
            task = self._task_for(who, project_name)
            comment = self.random.choice(COMMENTS[project_name])
            self._record(
                person, cursor, duration, project=project, task=task, comment=comment,
                wfh=day.weekday() == 4 and self.random.random() < 0.6,
                non_billable=project.category_id == self.projects["Internal"].category_id,
            )
            cursor += duration
            if index == 0:
                cursor += 45 * MINUTE_MS  # lunch

    def _task_for(self, who: str, project_name: str) -> Task | None:
        """The person's own task on the project, else one of the project's tasks, else none."""
        planned = self.tasks.get(project_name, [])
        own = [task for task, owner in planned if owner == who]
        if own:
            return own[0]
        return self.random.choice(planned)[0] if planned else None

    def _record(
        self,
        person: Person,
        start_ms: int,
        duration_ms: int,
        *,
        project: Project | None = None,
        task: Task | None = None,
        absence_type: AbsenceType | None = None,
        comment: str = "",
        wfh: bool = False,
        non_billable: bool = False,
    ) -> None:
        record = TimeRecord(
            organisation_id=self.org_id,
            person_id=person.id,
            start_ms=start_ms,
            end_ms=start_ms + duration_ms,
            duration_ms=duration_ms,
            task_id=task.id if task else None,
            absence_id=absence_type.id if absence_type else None,
            comment=comment,
            non_billable=non_billable,
            wfh=wfh,
            created_ms=start_ms + duration_ms,
            modified_ms=start_ms + duration_ms,
            modified_by_id=person.id,
            revision=1,
        )
        record.projects = [project] if project is not None else []
        self.add(record)

    def _expenses(self) -> None:
        days = self._working_days()
        entries = (
            ("grace", "Travel", "Build", 4_850, "Train to Harbor Bank workshop", 3),
            ("grace", "Meals", "Build", 6_420, "Team lunch with the client", 3),
            ("linus", "Software", "Brand refresh", 2_999, "Font licence", 6),
            ("katherine", "Equipment", None, 12_900, "USB-C dock", 9),
            ("dorothy", "Travel", "Discovery", 3_260, "Taxi to interview site", 11),
        )
        for who, type_name, project_name, cents, comment, back in entries:
            self.add(
                ExpenseRecord(
                    organisation_id=self.org_id,
                    date_ms=self._at(days[back], 12),
                    expense_type_id=self.expense_types[type_name].id,
                    value=cents,
                    currency=DEMO_CURRENCY,
                    person_id=self.persons[who].id,
                    project_id=self.projects[project_name].id if project_name else None,
                    comment=comment,
                    created_ms=self._at(days[back], 18),
                )
            )


async def export_demo(session: AsyncSession) -> dict[str, Any]:
    """The demo organisation as `timebot demo export` prints it (keys issued on first need)."""
    organisation = await find_demo_organisation(session)
    if organisation is None:
        raise LookupError("the demo organisation has not been seeded")
    org_id = organisation.id
    now_ms = organisation.created_ms

    persons = list(
        await session.scalars(
            # Archived people are not the demo's: timebot's own integration person is one.
            select(Person)
            .where(Person.organisation_id == org_id, Person.archived.is_(False))
            .order_by(Person.created_ms, Person.name, Person.id)
        )
    )
    role_order = {ROLE_ADMIN: 0, ROLE_MANAGER: 1, ROLE_EMPLOYEE: 2}
    persons.sort(key=lambda person: (role_order.get(person.role.kind, 3), person.name))
    exported_persons = []
    for person in persons:
        exported_persons.append(
            {
                "id": person.id,
                "name": person.name,
                "email": person.email,
                "role": person.role.kind,
                "apikey": await ensure_api_key(session, person, now_ms),
                "legacyToken": await _legacy_token(session, person, now_ms),
            }
        )

    projects = list(
        await session.scalars(
            select(Project).where(Project.organisation_id == org_id).order_by(
                Project.level, Project.name, Project.id
            )
        )
    )
    tasks = list(
        await session.scalars(
            select(Task).where(Task.organisation_id == org_id).order_by(Task.position, Task.id)
        )
    )
    absence_types = list(
        await session.scalars(
            select(AbsenceType).where(AbsenceType.organisation_id == org_id).order_by(
                AbsenceType.name, AbsenceType.id
            )
        )
    )
    expense_types = list(
        await session.scalars(
            select(ExpenseType).where(ExpenseType.organisation_id == org_id).order_by(
                ExpenseType.name, ExpenseType.id
            )
        )
    )
    return {
        "organisation": {
            "id": organisation.id,
            "name": organisation.name,
            "timezone": organisation.timezone,
            "currency": organisation.currency,
        },
        "persons": exported_persons,
        "projects": [
            {
                "id": project.id,
                "name": project.name,
                "parentId": project.parent_id,
                "category": project.category.name if project.category else None,
                "level": project.level,
            }
            for project in projects
        ],
        "tasks": [
            {
                "id": task.id,
                "name": task.name,
                "projectId": task.project_id,
                "status": task.status.name if task.status else None,
            }
            for task in tasks
        ],
        "absenceTypes": [
            {"id": item.id, "name": item.name, "unit": item.unit} for item in absence_types
        ],
        "expenseTypes": [{"id": item.id, "name": item.name} for item in expense_types],
    }


async def _legacy_token(session: AsyncSession, person: Person, now_ms: int) -> str | None:
    try:
        from service.legacy.tokens import ensure_legacy_token
    except ImportError:  # the legacy interface is not part of this build
        return None
    return await ensure_legacy_token(session, person, now_ms)
