"""Quick time entry's pure decisions at scale: an organisation with 400 projects (each with 4
subprojects) and 2,000 tasks, i.e. 4,000 targets to match `@…` against.

- timeentry_plan: median µs to parse and plan one entry (target matching by exact, prefix or
  fuzzy name over every target), beside parsing the same entry alone (the baseline). The
  matching (timebot.grammar.matching) scores every target, fuzzily too, even when one matches
  exactly: about 80 µs per target, so ~0.3 s per entry at this size;
- timeentry_catalogue: ms to build the catalogue (paths of every project and task) from the
  rows GraphQL returns, beside building the plain id → name map of the same rows.
"""

from __future__ import annotations

import time
from datetime import date

from bench.busy import busy_machine
from bench.common import Figure, median, note
from timebot.grammar import parse_entry
from timebot.timeentry.plan import (
    AbsenceRow,
    Catalogue,
    ProjectRow,
    TaskRow,
    build_catalogue,
    plan_entry,
)

FIGURES = ("timeentry_plan", "timeentry_catalogue")
TODAY = date(2026, 3, 18)
TEXTS = [
    "2h30 @client17/website fixing the header",
    "9:00-11:30 @client217/mobile/task0617 yesterday",
    "1:30 @clinet42/backend !nb #wfh “call with Bob”",
    "1d vacation friday",
    "90m @task1999",
]


def rows() -> tuple[list[ProjectRow], list[TaskRow], list[AbsenceRow]]:
    projects: list[ProjectRow] = []
    for i in range(400):
        top = f"p{i:04d}"
        projects.append(ProjectRow(top, f"Client{i}", None))
        for j, name in enumerate(("Website", "Mobile", "Backend", "Support")):
            projects.append(ProjectRow(f"{top}s{j}", name, top))
    tasks = [TaskRow(f"t{k:05d}", f"Task{k:04d}", None, (projects[(k * 5 + 2) % len(projects)].id,))
             for k in range(2000)]
    absences = [AbsenceRow("a1", "Vacation", "day"), AbsenceRow("a2", "Sick leave", "hour")]
    return projects, tasks, absences


def _timed_us(fn: object, rounds: int) -> float:
    samples = []
    with busy_machine():
        for _ in range(rounds):
            start = time.perf_counter()
            fn()  # type: ignore[operator]
            samples.append((time.perf_counter() - start) * 1e6)
    return median(samples)


def run(names: set[str]) -> list[Figure]:
    projects, tasks, absences = rows()
    figures: list[Figure] = []
    if "timeentry_catalogue" in names:
        build = _timed_us(lambda: build_catalogue(projects, tasks, absences), 20) / 1000
        plain = _timed_us(lambda: ({p.id: p.name for p in projects},
                                   {t.id: t.name for t in tasks}), 20) / 1000
        figures.append(Figure("timeentry_catalogue", build, "ms", plain))
    if "timeentry_plan" in names:
        catalogue: Catalogue = build_catalogue(projects, tasks, absences)
        note(f"{len(catalogue.targets)} targets")

        def plan_all() -> None:
            for text in TEXTS:
                parsed = parse_entry(text, "Europe/Berlin", TODAY)
                assert isinstance(parsed, list)
                plan_entry(parsed[0], catalogue)

        def parse_all() -> None:
            for text in TEXTS:
                parse_entry(text, "Europe/Berlin", TODAY)

        figures.append(Figure("timeentry_plan", _timed_us(plan_all, 20) / len(TEXTS), "us",
                              _timed_us(parse_all, 20) / len(TEXTS)))
    return figures
