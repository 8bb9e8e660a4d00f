"""The demo organisation's structure: its tags (teams, project kinds), the project tree with
its managers, the planned tasks with their owners, and the absence and expense types."""

from __future__ import annotations

from dataclasses import dataclass

from service.absences.models import ABSENCE_UNIT_DAY, ABSENCE_UNIT_HOUR
from service.demo.seed import DAY_MS, DemoSeed
from service.models import (
    AbsenceType,
    ExpenseType,
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
)

TEAMS = {
    "Engineering": ("grace", "margaret", "alan", "katherine"),
    "Design": ("linus", "dorothy", "edsger", "barbara"),
}
# Design submits monthly timesheets (the fronts' "this period" is their month); Engineering
# the default weeks.
TEAM_SETTINGS = {"Design": {"periodicity": "monthly"}}


@dataclass
class ProjectSpec:
    name: str
    category: str
    children: tuple[ProjectSpec, ...] = ()
    manager: str | None = None  # e-mail local part
    color: str | None = None


PROJECTS = (
    ProjectSpec(
        "Harbor Bank",
        "Clients",
        (
            ProjectSpec(
                "Mobile banking app",
                "Clients",
                (ProjectSpec("Discovery", "Clients"), ProjectSpec("Build", "Clients")),
                manager="grace",
                color="#1f77b4",
            ),
            ProjectSpec("Brand refresh", "Clients", manager="linus", color="#ff7f0e"),
        ),
        color="#1f77b4",
    ),
    ProjectSpec(
        "Greenfield Foods",
        "Clients",
        (ProjectSpec("Online shop", "Clients", manager="grace", color="#2ca02c"),),
        color="#2ca02c",
    ),
    ProjectSpec(
        "Internal",
        "Internal",
        (
            ProjectSpec("Hiring", "Internal", manager="linus"),
            ProjectSpec("Training", "Internal"),
            ProjectSpec("Admin & meetings", "Internal"),
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


async def seed_tags(seed: DemoSeed, start_ms: int) -> None:
    teams = TagCategory(organisation_id=seed.org_id, name="Teams", level_names=["Team"])
    kinds = TagCategory(organisation_id=seed.org_id, name="Project kind", level_names=[])
    seed.add(teams, kinds)
    await seed.session.flush()
    for team, members in TEAMS.items():
        tag = Tag(
            organisation_id=seed.org_id, name=team, category_id=teams.id, level=0,
            settings=dict(TEAM_SETTINGS.get(team, {})), created_ms=start_ms,
        )
        seed.add(tag)
        await seed.session.flush()
        for member in members:
            seed.add(
                PersonTag(
                    organisation_id=seed.org_id, tag_id=tag.id,
                    person_id=seed.persons[member].id, start_ms=start_ms,
                )
            )
    for name in ("Billable", "Non-billable"):
        tag = Tag(
            organisation_id=seed.org_id, name=name, category_id=kinds.id, level=0,
            settings={}, created_ms=start_ms,
        )
        seed.add(tag)
        seed.kind_tags[name] = tag
    await seed.session.flush()


async def seed_projects(seed: DemoSeed, start_ms: int) -> None:
    categories: dict[str, ProjectCategory] = {}
    for name, levels in PROJECT_CATEGORIES.items():
        categories[name] = ProjectCategory(
            organisation_id=seed.org_id, name=name, level_names=levels
        )
        seed.add(categories[name])
    await seed.session.flush()

    async def create(spec: ProjectSpec, parent: Project | None) -> None:
        project = Project(
            organisation_id=seed.org_id,
            name=spec.name,
            parent_id=parent.id if parent else None,
            category_id=categories[spec.category].id,
            level=parent.level + 1 if parent else 0,
            color=spec.color or (parent.color if parent else None),
            created_ms=start_ms,
        )
        seed.add(project)
        await seed.session.flush()
        seed.projects[spec.name] = project
        if spec.manager:
            seed.add(
                ProjectManager(
                    organisation_id=seed.org_id, project_id=project.id,
                    person_id=seed.persons[spec.manager].id,
                )
            )
        if parent is None:
            kind = "Billable" if spec.category == "Clients" else "Non-billable"
            seed.add(
                ProjectTag(
                    organisation_id=seed.org_id, tag_id=seed.kind_tags[kind].id,
                    project_id=project.id, start_ms=start_ms,
                )
            )
        for child in spec.children:
            await create(child, project)

    for spec in PROJECTS:
        await create(spec, None)


async def seed_tasks(seed: DemoSeed, start_ms: int) -> None:
    category = TaskCategory(
        organisation_id=seed.org_id, name="Delivery", level_names=["Task", "Subtask"]
    )
    seed.add(category)
    await seed.session.flush()
    statuses: dict[str, TaskStatus] = {}
    palette = (0x9E9E9E, 0x2196F3, 0xFF9800, 0x4CAF50)
    for position, name in enumerate(TASK_STATUSES):
        statuses[name] = TaskStatus(
            organisation_id=seed.org_id, category_id=category.id, name=name,
            color=palette[position], position=position,
        )
        seed.add(statuses[name])
    await seed.session.flush()
    for position, (name, project_name, status, owner) in enumerate(TASKS):
        task = Task(
            organisation_id=seed.org_id,
            name=name,
            category_id=category.id,
            status_id=statuses[status].id,
            project_id=seed.projects[project_name].id,
            level=0,
            start_ms=start_ms,
            end_ms=seed.now_ms + 14 * DAY_MS,
            effort=float(seed.random.choice((8, 16, 24, 40)) * 60),
            position=position,
            created_ms=start_ms,
        )
        seed.add(task)
        await seed.session.flush()
        seed.add(
            TaskOwner(
                organisation_id=seed.org_id, task_id=task.id,
                person_id=seed.persons[owner].id, potential=False, fte_pct=50.0,
            )
        )
        seed.tasks.setdefault(project_name, []).append((task, owner))


def seed_types(seed: DemoSeed) -> None:
    for name, unit, costs, color in ABSENCE_TYPES:
        seed.absence_types[name] = AbsenceType(
            organisation_id=seed.org_id, name=name, unit=unit, involve_costs=costs,
            color=color,
        )
        seed.add(seed.absence_types[name])
    for name, color in EXPENSE_TYPES:
        seed.expense_types[name] = ExpenseType(
            organisation_id=seed.org_id, name=name, color=color
        )
        seed.add(seed.expense_types[name])
