"""Pure decisions of quick time entry: what to create from a parsed entry and the catalogue of
what the person may log on, and how to say what the service refused.

No I/O here: the GraphQL calls sit in `timebot.timeentry.gateway`, the bot's memory in
`timebot.timeentry.memory`, and `timebot.timeentry.actions` runs them in order.

Amounts typed in days ("1d vacation", "0.5d @acme") become time at the length of a working
day, `WORKING_DAY_MS` = 8 hours: the same working day the service's `getAbsenceConsumed`
divides by for absence types counted in days, so "1d vacation" consumes exactly 1 day of an
absence type in days, and 8 hours of one in hours.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from functools import cached_property

from timebot.errors import AccountInactive
from timebot.grammar import (
    AbsenceType,
    Ambiguous,
    Candidate,
    Match,
    NoMatch,
    ParsedEntry,
    describe,
    match_absence,
    match_target,
)
from timebot.grammar.matching import target_index
from timebot.grammar.model import MS_PER_HOUR
from timebot.grammar.render import format_target
from timebot.grammar.target_index import TargetIndex
from timebot.l10n import _
from timebot.timeentry.texts import entry_reading

WORKING_DAY_MS = 8 * MS_PER_HOUR


@dataclass(frozen=True)
class ProjectRow:
    id: str
    name: str
    parent_id: str | None


@dataclass(frozen=True)
class TaskRow:
    id: str
    name: str
    parent_id: str | None
    project_ids: tuple[str, ...]


@dataclass(frozen=True)
class AbsenceRow:
    id: str
    name: str
    unit: str  # "day" or "hour"


@dataclass(frozen=True)
class Target:
    """A project or task the person may log on, with its path from the top project."""

    candidate: Candidate
    project_ids: tuple[str, ...]
    task_id: str | None

    @property
    def label(self) -> str:
        return "/".join(self.candidate.path)


@dataclass(frozen=True)
class Catalogue:
    targets: tuple[Target, ...]
    absences: tuple[AbsenceRow, ...]

    @property
    def candidates(self) -> list[Candidate]:
        return [t.candidate for t in self.targets]

    @cached_property
    def index(self) -> TargetIndex:
        """What matching `@…` precomputes, once per catalogue: every entry of a message
        reuses it, and a later message whose catalogue is the same finds it again
        (`matching.target_index` keeps the last few)."""
        return target_index(self.candidates)

    @cached_property
    def _by_candidate(self) -> dict[Candidate, Target]:
        found: dict[Candidate, Target] = {}
        for target in self.targets:
            found.setdefault(target.candidate, target)
        return found

    def target(self, candidate: Candidate) -> Target:
        return self._by_candidate[candidate]

    def absence(self, absence_id: str) -> AbsenceRow:
        return next(a for a in self.absences if a.id == absence_id)


def _project_path(project: ProjectRow, by_id: dict[str, ProjectRow]) -> tuple[str, ...]:
    path: list[str] = []
    seen: set[str] = set()
    current: ProjectRow | None = project
    while current is not None and current.id not in seen:
        seen.add(current.id)
        path.append(current.name)
        current = by_id.get(current.parent_id) if current.parent_id else None
    return tuple(reversed(path))


def build_catalogue(
    projects: Sequence[ProjectRow], tasks: Sequence[TaskRow], absences: Sequence[AbsenceRow]
) -> Catalogue:
    """Targets: every project (path from its top project), and every task under each project
    it is assigned to (project path + the task's own parents), or alone when unassigned."""
    projects_by_id = {p.id: p for p in projects}
    tasks_by_id = {t.id: t for t in tasks}
    targets: list[Target] = []
    paths: dict[str, tuple[str, ...]] = {}
    for project in projects:
        path = _project_path(project, projects_by_id)
        paths[project.id] = path
        targets.append(Target(Candidate(project.id, path, "project"), (project.id,), None))
    for task in tasks:
        own = _task_path(task, tasks_by_id)
        homes = [pid for pid in task.project_ids if pid in paths]
        if not homes:
            targets.append(Target(Candidate(task.id, own, "task"), (), task.id))
        for pid in homes:
            targets.append(
                Target(Candidate(f"{pid}:{task.id}", paths[pid] + own, "task"), (pid,), task.id)
            )
    return Catalogue(tuple(targets), tuple(absences))


def _task_path(task: TaskRow, by_id: dict[str, TaskRow]) -> tuple[str, ...]:
    path: list[str] = []
    seen: set[str] = set()
    current: TaskRow | None = task
    while current is not None and current.id not in seen:
        seen.add(current.id)
        path.append(current.name)
        current = by_id.get(current.parent_id) if current.parent_id else None
    return tuple(reversed(path))


@dataclass(frozen=True)
class RecordPlan:
    """One time record to create (addTimeRecord, then the edits it has no arguments for)."""

    start_ms: int
    end_ms: int | None
    duration_ms: int
    project_ids: tuple[str, ...]
    task_id: str | None
    absence_id: str | None
    comment: str | None
    wfh: bool
    non_billable: bool | None  # None: the service's default (billable)
    #: how it was read, with the names resolved: the printed-back form (parses to the same)
    #: in the reader's formats where they chose some (`texts.entry_reading`)
    reading: str
    #: how an amount in days was converted, when it was
    note: str = ""


@dataclass(frozen=True)
class Choice:
    """One candidate of an ambiguous entry: a label and the entry rewritten to name it."""

    label: str
    text: str


@dataclass(frozen=True)
class Unresolved:
    """Why the entry cannot be logged yet; `choices` when one of several was meant."""

    reason: str
    choices: tuple[Choice, ...] = ()


def _amount_ms(entry: ParsedEntry) -> tuple[int, str]:
    if entry.days is None:
        return entry.duration_ms or 0, ""
    ms = int(Decimal(WORKING_DAY_MS) * entry.days)
    hours = Decimal(ms) / Decimal(MS_PER_HOUR)
    text = f"{hours.normalize():f}h"
    return ms, _("{days}d counted as {hours} (a working day is 8h)").format(
        days=f"{entry.days.normalize():f}", hours=text)


def _listing(names: Sequence[str]) -> str:
    return ", ".join(names)


def plan_entry(entry: ParsedEntry, catalogue: Catalogue) -> RecordPlan | Unresolved:
    """What to create for one parsed entry, or why not (unknown or ambiguous target)."""
    duration_ms, note = _amount_ms(entry)
    if duration_ms <= 0:
        return Unresolved(_("The duration is zero: nothing to log."))
    end_ms = entry.start_ms + duration_ms if entry.is_range else None
    if entry.target is not None:
        typed = format_target(entry.target)
        found = match_target(entry.target, catalogue.index)
        if isinstance(found, Ambiguous):
            choices = tuple(
                Choice("/".join(c.path), describe(replace(entry, target=c.path)))
                for c in found.candidates
            )
            return Unresolved(_("{typed} could mean several: {names}.").format(
                typed=typed, names=_listing([c.label for c in choices])), choices)
        if isinstance(found, NoMatch):
            hint = (" " + _("Did you mean {names}?").format(
                names=_listing(["/".join(c.path) for c in found.suggestions]))
                if found.suggestions else "")
            return Unresolved(_("{typed} is no project or task you may log time on.").format(
                typed=typed) + hint)
        target = catalogue.target(found.value)
        resolved = replace(entry, target=target.candidate.path)
        return RecordPlan(
            start_ms=entry.start_ms,
            end_ms=end_ms,
            duration_ms=duration_ms,
            project_ids=target.project_ids,
            task_id=target.task_id,
            absence_id=None,
            comment=entry.comment,
            wfh=entry.wfh,
            non_billable=None if entry.billable is None else not entry.billable,
            reading=entry_reading(resolved),
            note=note,
        )
    if not entry.absence_words:
        return Unresolved(_(
            "What was it for? Name a project or task with @ (e.g. @acme/website), or an"
            " absence type (e.g. 1d vacation)."
        ))
    types = [AbsenceType(a.id, a.name) for a in catalogue.absences]
    typed_words = " ".join(entry.absence_words)
    absence = match_absence(entry.absence_words, types)
    if isinstance(absence, Ambiguous):
        choices = tuple(
            Choice(t.name, describe(replace(entry, absence_words=(t.name,))))
            for t in absence.candidates
        )
        return Unresolved(_("“{typed}” could be several absence types: {names}.").format(
            typed=typed_words, names=_listing([c.label for c in choices])), choices)
    if not isinstance(absence, Match):
        names = [t.name for t in absence.suggestions] or [a.name for a in catalogue.absences]
        hint = (" " + _("Absence types: {names}.").format(names=_listing(names))
                if names else "")
        return Unresolved(_("“{typed}” is no absence type; for project work put @ before the "
                            "project.").format(typed=typed_words) + hint)
    row = catalogue.absence(absence.value.id)
    comment_parts = [*absence.rest, *([entry.comment] if entry.comment else [])]
    comment = " ".join(comment_parts) or None
    shown = replace(entry, absence_words=(row.name,), comment=comment)
    return RecordPlan(
        start_ms=entry.start_ms,
        end_ms=end_ms,
        duration_ms=duration_ms,
        project_ids=(),
        task_id=None,
        absence_id=row.id,
        comment=comment,
        wfh=entry.wfh,
        non_billable=None if entry.billable is None else not entry.billable,
        reading=entry_reading(shown),
        note=note,
    )


# --- what the service refused, in plain words ----------------------------------------------

_ARGUMENT_WORDS = {
    "duration": "the duration",
    "startTime": "the start",
    "endTime": "the end",
    "projectIds": "the project",
    "taskId": "the task",
    "absenceId": "the absence type",
    "personId": "the person",
    "comment": "the comment",
}


def plain_words(messages: Sequence[str]) -> str:
    """The service's error messages as a sentence for the person.

    `Invalid argument "duration": must not be negative` → `The duration must not be
    negative.`; rule refusals (a locked timesheet, a planning the person may not record time
    on, a closed period) are already sentences: capitalised and ended with a full stop."""
    sentences: list[str] = []
    for message in messages:
        text = message.strip()
        if text.startswith('Invalid argument "'):
            name, _, rest = text[len('Invalid argument "'):].partition('":')
            words = _ARGUMENT_WORDS.get(name.split("[")[0], f"“{name}”")
            text = f"{words} {rest.strip()}"
        if text == "AccountIsInactive":
            text = AccountInactive.PLAIN
        elif text.startswith("APIKeyError"):
            text = _("the service did not accept your key (ask an administrator to re-link "
                     "it)")
        if not text:
            continue
        text = text[0].upper() + text[1:]
        sentences.append(text if text.endswith((".", "!", "?")) else text + ".")
    return " ".join(dict.fromkeys(sentences)) or _("The service refused it.")
