"""Quick time entry's pure decisions at scale: an organisation with 400 projects (each with 4
subprojects) and 2,000 tasks, i.e. 4,000 targets to match `@…` against.

- timeentry_plan: median µs to parse and plan one entry (target matching by exact, prefix or
  fuzzy name), beside parsing the same entry alone (the baseline). The matching used to
  score every target with difflib and a Python edit distance (~35 ms per entry at this
  size); it goes through the catalogue's TargetIndex now (~1 ms);
- timeentry_catalogue: ms to build the catalogue (paths of every project and task) from the
  rows GraphQL returns, beside building the plain id → name map of the same rows.
- quick_entry_match_4000, quick_entry_match_20000: median µs of CPU (the process's: the
  machine may be shared) to match one typed `@…` path (`TYPED`: exact, mistyped, a tail of
  longer paths, nothing) against 4,000 and 20,000 targets through the catalogue's
  TargetIndex (built once per catalogue; its time is noted apart), beside parsing an entry
  naming the same path (the baseline). Goals: under 2 ms at 4,000 and under 5 ms at
  20,000. Before the index (difflib, every target scored, the same paths): about 40 ms at
  4,000 and 500 ms at 20,000.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import date

from bench.busy import busy_machine
from bench.common import Figure, median, note
from timebot.grammar import match_target, parse_entry
from timebot.timeentry.plan import (
    AbsenceRow,
    Catalogue,
    ProjectRow,
    TaskRow,
    build_catalogue,
    plan_entry,
)

FIGURES = ("timeentry_plan", "timeentry_catalogue", "quick_entry_match_4000",
           "quick_entry_match_20000")
TODAY = date(2026, 3, 18)
TEXTS = [
    "2h30 @client17/website fixing the header",
    "9:00-11:30 @client217/mobile/task0617 yesterday",
    "1:30 @clinet42/backend !nb #wfh “call with Bob”",
    "1d vacation friday",
    "90m @task1999",
]


TYPED = [  # the targets of TEXTS above, then a typo in a tail and a name of nothing
    ["client17", "website"],  # exact
    ["client217", "mobile", "task0617"],  # exact at 4,000; at 20,000 typos of others
    ["clinet42", "backend"],  # a typo
    ["task1999"],  # a tail of longer paths
    ["tsak0042"],  # a typo in a tail
    ["nothing at all"],  # nothing: the closest names suggested
]
#: noted apart: "a project's unknown task", where the project's name is within two typos of
#: most of these numbered names, so the suggestions weigh thousands of tasks
SIBLINGS = ["client3", "xyzzy"]


def rows(tops: int = 400, task_count: int = 2000
         ) -> tuple[list[ProjectRow], list[TaskRow], list[AbsenceRow]]:
    """`tops` top projects of 4 subprojects each and `task_count` tasks: 5 x tops + tasks
    targets (4,000 by default)."""
    projects: list[ProjectRow] = []
    for i in range(tops):
        top = f"p{i:04d}"
        projects.append(ProjectRow(top, f"Client{i}", None))
        for j, name in enumerate(("Website", "Mobile", "Backend", "Support")):
            projects.append(ProjectRow(f"{top}s{j}", name, top))
    tasks = [TaskRow(f"t{k:05d}", f"Task{k:04d}", None, (projects[(k * 5 + 2) % len(projects)].id,))
             for k in range(task_count)]
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


def _matching(name: str, tops: int, task_count: int) -> Figure:
    catalogue = build_catalogue(*rows(tops, task_count))
    start = time.perf_counter()
    index = catalogue.index
    note(f"{name}: {len(catalogue.targets)} targets, index built in "
         f"{(time.perf_counter() - start) * 1000:.1f} ms")
    for typed in TYPED:  # the prefixes of each typed length, remembered by the index
        match_target(typed, index)
    texts = [f"1h @{'/'.join(typed)}" for typed in TYPED]

    def match_all() -> None:
        for typed in TYPED:
            match_target(typed, index)

    def parse_all() -> None:
        for text in texts:
            parse_entry(text, "Europe/Berlin", TODAY)

    siblings = _cpu_us(lambda: match_target(SIBLINGS, index), 5)
    note(f"{name}: @{'/'.join(SIBLINGS)} (a project's unknown task) {siblings / 1000:.1f} ms")
    return Figure(name, _cpu_us(match_all, 30) / len(TYPED), "us",
                  _cpu_us(parse_all, 30) / len(TYPED))


def _cpu_us(fn: Callable[[], object], rounds: int) -> float:
    samples = []
    with busy_machine():
        for _ in range(rounds):
            start = time.process_time()
            fn()
            samples.append((time.process_time() - start) * 1e6)
    return median(samples)


def run(names: set[str]) -> list[Figure]:
    projects, tasks, absences = rows()
    figures: list[Figure] = []
    if "quick_entry_match_4000" in names:
        figures.append(_matching("quick_entry_match_4000", 400, 2000))
    if "quick_entry_match_20000" in names:
        figures.append(_matching("quick_entry_match_20000", 2000, 10000))
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
