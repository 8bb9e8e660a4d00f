"""What changed between two submissions of a timesheet, and whose approvals carry over.

A resubmission records the time records added, modified and deleted since the previous
submission; a project or task manager who approved the previous submission is asked again only
if entries on their own projects or tasks changed (on either side of the change). Pure.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


def fingerprint(facts: Mapping[str, Any]) -> str:
    """A stable digest of what a time record says."""
    text = json.dumps(facts, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclass
class Changes:
    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, list[str]]:
        return {"added": self.added, "modified": self.modified, "deleted": self.deleted}

    @property
    def any(self) -> bool:
        return bool(self.added or self.modified or self.deleted)


def diff(previous: Mapping[str, Mapping[str, Any]], current: Mapping[str, Mapping[str, Any]]
         ) -> Changes:
    """Snapshots are {record_id: {"fp": ..., "projects": [...], "task": ...}}."""
    return Changes(
        added=sorted(set(current) - set(previous)),
        modified=sorted(
            rid for rid in set(current) & set(previous)
            if current[rid].get("fp") != previous[rid].get("fp")
        ),
        deleted=sorted(set(previous) - set(current)),
    )


def touched(
    previous: Mapping[str, Mapping[str, Any]],
    current: Mapping[str, Mapping[str, Any]],
    changes: Changes,
) -> tuple[set[str], set[str]]:
    """Projects and tasks carried by changed records, before or after the change."""
    projects: set[str] = set()
    tasks: set[str] = set()
    for rid in [*changes.added, *changes.modified, *changes.deleted]:
        for side in (previous.get(rid), current.get(rid)):
            if side is None:
                continue
            projects.update(side.get("projects") or [])
            if side.get("task"):
                tasks.add(str(side["task"]))
    return projects, tasks


def affected_managers(
    touched_projects: Iterable[str],
    touched_tasks: Iterable[str],
    project_manager_ids: Mapping[str, set[str]],
    task_manager_ids: Mapping[str, set[str]],
) -> tuple[set[str], set[str]]:
    """(project managers, task managers) whose own projects / tasks changed."""
    pms: set[str] = set()
    for project_id in touched_projects:
        pms |= project_manager_ids.get(project_id, set())
    tms: set[str] = set()
    for task_id in touched_tasks:
        tms |= task_manager_ids.get(task_id, set())
    return pms, tms


def carried_over(
    stage_type: str,
    stage_approvers: Iterable[str],
    previous_approvers_by_type: Mapping[str, set[str]],
    affected_pms: set[str],
    affected_tms: set[str],
) -> set[str]:
    """Approvers of a project- or task-manager stage whose earlier approval still stands."""
    if stage_type not in ("pm", "tm"):
        return set()
    before = previous_approvers_by_type.get(stage_type, set())
    affected = affected_pms if stage_type == "pm" else affected_tms
    return {a for a in stage_approvers if a in before and a not in affected}
