"""The demo organisation's history: a few weeks of time records (each person's working days
on their projects and tasks, with some absences) and a handful of expenses."""

from __future__ import annotations

import datetime as dt

from service.demo.seed import DEMO_CURRENCY, HOUR_MS, MINUTE_MS, DemoSeed
from service.models import AbsenceType, ExpenseRecord, Person, Project, Task, TimeRecord

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
# (person local part, expense type, project or None, cents, comment, working-day index back)
EXPENSES = (
    ("grace", "Travel", "Build", 4_850, "Train to Harbor Bank workshop", 3),
    ("grace", "Meals", "Build", 6_420, "Team lunch with the client", 3),
    ("linus", "Software", "Brand refresh", 2_999, "Font licence", 6),
    ("katherine", "Equipment", None, 12_900, "USB-C dock", 9),
    ("dorothy", "Travel", "Discovery", 3_260, "Taxi to interview site", 11),
)


def seed_time_records(seed: DemoSeed) -> None:
    days = seed.working_days()
    absent: dict[tuple[str, dt.date], tuple[AbsenceType, int]] = {}
    for who, type_name, back, length in ABSENCES:
        absence_type = seed.absence_types[type_name]
        if length == 0:  # a couple of hours, the rest of the day worked
            absent[(who, days[back])] = (absence_type, 2 * HOUR_MS)
        for index in range(back, back + length):
            absent[(who, days[index])] = (absence_type, 8 * HOUR_MS)
    for who, person in seed.persons.items():
        for day in days:
            hour, minute = seed.random.choice((8, 9, 9, 9)), seed.random.choice((0, 15, 30))
            cursor = seed.at(day, hour, minute)
            worked_target = seed.random.choice((7.5, 8, 8, 8, 8.5)) * HOUR_MS
            absence = absent.get((who, day))
            if absence is not None:
                absence_type, duration = absence
                _record(
                    seed, person, cursor, duration, absence_type=absence_type,
                    comment=absence_type.name,
                )
                if duration >= 8 * HOUR_MS:
                    continue
                cursor += duration
                worked_target -= duration
            _work_day(seed, who, person, day, cursor, int(worked_target))


def _work_day(
    seed: DemoSeed, who: str, person: Person, day: dt.date, cursor: int, target: int
) -> None:
    projects = WORKS_ON[who]
    blocks = seed.random.choice((2, 3, 3))
    remaining = target
    for index in range(blocks):
        if index == blocks - 1:
            duration = remaining
        else:
            share = seed.random.choice((0.3, 0.4, 0.5))
            duration = int(target * share) // (15 * MINUTE_MS) * (15 * MINUTE_MS)
        remaining -= duration
        if duration <= 0:
            continue
        project_name = projects[0] if index == 0 else seed.random.choice(projects)
        project = seed.projects[project_name]
        task = _task_for(seed, who, project_name)
        comment = seed.random.choice(COMMENTS[project_name])
        _record(
            seed, person, cursor, duration, project=project, task=task, comment=comment,
            wfh=day.weekday() == 4 and seed.random.random() < 0.6,
            non_billable=project.category_id == seed.projects["Internal"].category_id,
        )
        cursor += duration
        if index == 0:
            cursor += 45 * MINUTE_MS  # lunch


def _task_for(seed: DemoSeed, who: str, project_name: str) -> Task | None:
    """The person's own task on the project, else one of the project's tasks, else none."""
    planned = seed.tasks.get(project_name, [])
    own = [task for task, owner in planned if owner == who]
    if own:
        return own[0]
    return seed.random.choice(planned)[0] if planned else None


def _record(
    seed: DemoSeed,
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
        organisation_id=seed.org_id,
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
    seed.add(record)


def seed_expenses(seed: DemoSeed) -> None:
    days = seed.working_days()
    for who, type_name, project_name, cents, comment, back in EXPENSES:
        seed.add(
            ExpenseRecord(
                organisation_id=seed.org_id,
                date_ms=seed.at(days[back], 12),
                expense_type_id=seed.expense_types[type_name].id,
                value=cents,
                currency=DEMO_CURRENCY,
                person_id=seed.persons[who].id,
                project_id=seed.projects[project_name].id if project_name else None,
                comment=comment,
                created_ms=seed.at(days[back], 18),
            )
        )
