"""Approval stages: their configuration, who approves each one, and when a stage is done.

Pure: everything the rules need arrives as arguments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from service.value_words import choice_problem, described

STAGE_TYPES = ("person", "tag", "pm", "tm", "ppm", "admin")
STAGE_LABELS = {
    "admin": "Admins",
    "pm": "Project managers",
    "ppm": "People managers",
    "tm": "Task managers",
    "tag": "Tagged people",
    "person": "Specific people",
}
QUORUM_ANY = "any"
QUORUM_ALL = "all"


class StageInputError(ValueError):
    """A stage of the input is wrong; `field` names it relative to the stage."""

    def __init__(self, index: int, field_name: str, problem: str) -> None:
        super().__init__(problem)
        self.index = index
        self.field_name = field_name
        self.problem = problem


def normalise_quorum(value: Any) -> str:
    """"any" (the default), "all" (any case) or a positive number, as stored: "any", "all", "3"."""
    if value is None:
        return QUORUM_ANY
    text = str(value).strip().lower()
    if text in (QUORUM_ANY, QUORUM_ALL):
        return text
    if text.isdigit() and int(text) >= 1:
        return str(int(text))
    raise ValueError(f'must be "any", "all" or a positive number, got {described(value)}')


def parse_stage_inputs(stages: Sequence[Mapping[str, Any] | None] | None) -> list[dict[str, Any]]:
    """Validated stage configuration from SvcApprovalStageInput objects (null clears)."""
    parsed: list[dict[str, Any]] = []
    for index, stage in enumerate(stages or []):
        if stage is None:
            raise StageInputError(index, "", "must be an object, not null")
        kind = str(stage.get("type") or "")
        if kind not in STAGE_TYPES:
            raise StageInputError(
                index, "type", choice_problem(STAGE_TYPES, kind)
            )
        person_ids = [p for p in (stage.get("personIds") or []) if p is not None]
        tag_ids = [t for t in (stage.get("tagIds") or []) if t is not None]
        if kind == "person" and not person_ids:
            raise StageInputError(index, "personIds", "a Specific people stage names people")
        if kind == "tag" and not tag_ids:
            raise StageInputError(index, "tagIds", "a Tagged people stage names tags")
        try:
            quorum = normalise_quorum(stage.get("quorum"))
        except ValueError as error:
            raise StageInputError(index, "quorum", str(error)) from None
        parsed.append(
            {
                "type": kind,
                "personIds": list(dict.fromkeys(person_ids)) if kind == "person" else [],
                "tagIds": list(dict.fromkeys(tag_ids)) if kind == "tag" else [],
                "quorum": quorum,
            }
        )
    return parsed


def required_approvals(quorum: str, approvers: int) -> int:
    """How many approvals meet the quorum among `approvers` eligible people."""
    if approvers <= 0:
        return 0
    if quorum == QUORUM_ANY:
        return 1
    if quorum == QUORUM_ALL:
        return approvers
    return min(int(quorum), approvers)


@dataclass
class Directory:
    """Who is who, for one timesheet: everything stage resolution looks up."""

    owner_id: str
    active_ids: set[str]
    admin_ids: set[str]
    people_manager_ids: set[str]
    # project id -> managers of it and of its ancestors
    project_manager_ids: dict[str, set[str]] = field(default_factory=dict)
    # task id -> its managers (owners)
    task_manager_ids: dict[str, set[str]] = field(default_factory=dict)
    # tag id -> people carrying it (or a descendant)
    tagged_ids: dict[str, set[str]] = field(default_factory=dict)


@dataclass
class ResolvedStage:
    type: str
    quorum: str
    approvers: list[str]
    required: int
    skipped: bool
    escalated: bool = False

    @property
    def label(self) -> str:
        return STAGE_LABELS[self.type]

    def as_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "quorum": self.quorum,
            "approvers": self.approvers,
            "required": self.required,
            "skipped": self.skipped,
            "escalated": self.escalated,
        }


def candidates(
    stage: Mapping[str, Any], project_ids: set[str], task_ids: set[str], directory: Directory
) -> set[str]:
    """Everyone the stage's approver type names for this content (owner included)."""
    kind = stage["type"]
    found: set[str] = set()
    if kind == "admin":
        found = set(directory.admin_ids)
    elif kind == "ppm":
        found = set(directory.people_manager_ids)
    elif kind == "pm":
        for project_id in project_ids:
            found |= directory.project_manager_ids.get(project_id, set())
    elif kind == "tm":
        for task_id in task_ids:
            found |= directory.task_manager_ids.get(task_id, set())
    elif kind == "tag":
        for tag_id in stage.get("tagIds") or []:
            found |= directory.tagged_ids.get(tag_id, set())
    elif kind == "person":
        found = set(stage.get("personIds") or [])
    return found & directory.active_ids


def resolve_stages(
    config: Sequence[Mapping[str, Any]],
    project_ids: set[str],
    task_ids: set[str],
    directory: Directory,
) -> list[ResolvedStage]:
    """The stages of one submission with their eligible approvers.

    No one approves their own timesheet: the owner is removed from every stage. A stage whose
    only eligible approver was the owner goes to the administrators other than the owner
    (escalated) rather than being skipped; a stage with no eligible approver is skipped.
    """
    resolved: list[ResolvedStage] = []
    for stage in config:
        found = candidates(stage, project_ids, task_ids, directory)
        escalated = False
        approvers = found - {directory.owner_id}
        if not approvers and directory.owner_id in found:
            approvers = (directory.admin_ids & directory.active_ids) - {directory.owner_id}
            escalated = bool(approvers)
        ordered = sorted(approvers)
        quorum = str(stage.get("quorum") or QUORUM_ANY)
        resolved.append(
            ResolvedStage(
                type=stage["type"],
                quorum=quorum,
                approvers=ordered,
                required=required_approvals(quorum, len(ordered)),
                skipped=not ordered,
                escalated=escalated,
            )
        )
    return resolved


def first_open_stage(
    stages: Sequence[Mapping[str, Any]], start: int, approvals: Mapping[int, set[str]]
) -> int:
    """From `start`, the first stage that is neither skipped nor already meeting its quorum;
    len(stages) when every remaining stage is done (the timesheet is approved)."""
    index = start
    while index < len(stages):
        stage = stages[index]
        if stage.get("skipped"):
            index += 1
            continue
        given = approvals.get(index, set()) & set(stage.get("approvers") or [])
        if len(given) >= int(stage.get("required") or 0):
            index += 1
            continue
        return index
    return index


def pending_approvers(stage: Mapping[str, Any], given: set[str]) -> list[str]:
    """Approvers of the stage who have not approved yet."""
    return [a for a in stage.get("approvers") or [] if a not in given]


def last_active_stage(stages: Sequence[Mapping[str, Any]]) -> int | None:
    """Index of the last stage that is not skipped (None when all are)."""
    for index in range(len(stages) - 1, -1, -1):
        if not stages[index].get("skipped"):
            return index
    return None
