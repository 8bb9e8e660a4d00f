"""Where a custom field shows (SvcCustomFieldVisibility), as a pure rule and its edits.

A field shows on persons and on absence types when those switches are on; on projects
(tasks) when `projects` (`tasks`) is a list: empty, every project (task); otherwise those of
a listed category, at one of its levels (no levels: every level). On time records when
`timeRecords` is set: a worked record whose projects have one of `projectCategories` and
whose task has one of `taskCategories` (an empty or null list: any), an absence record when
`absences` is on. A field assigned to a time record shows on that record whatever the rule
says. Tags have no switch: a field shows on every tag.

A new field shows on time records only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

KINDS = ("person", "project", "task", "tag", "timeRecord", "absenceType")


def initial() -> dict[str, Any]:
    return {"persons": False, "absenceTypes": False, "projects": None, "tasks": None,
            "timeRecords": {"projectCategories": None, "taskCategories": None,
                            "absences": False}}


def normalised(stored: Mapping[str, Any] | None) -> dict[str, Any]:
    return {**initial(), **(stored or {})}


@dataclass(frozen=True)
class Target:
    """What the rule needs to know of the entity a value is put on."""

    kind: str
    category_ids: frozenset[str] = frozenset()  # a project's or task's own category
    level: int = 0
    task_category_ids: frozenset[str] = frozenset()  # a time record's task's category
    absence: bool = False
    assigned: bool = False  # a time record the field is assigned to


def _listed(entries: list[dict[str, Any]] | None, target: Target) -> bool:
    if entries is None:
        return False
    if not entries:
        return True
    return any(entry["categoryId"] in target.category_ids
               and (not entry["levels"] or target.level in entry["levels"])
               for entry in entries)


def _among(wanted: list[str] | None, have: frozenset[str]) -> bool:
    return not wanted or not have.isdisjoint(wanted)


def shows_on(stored: Mapping[str, Any] | None, target: Target) -> bool:
    visibility = normalised(stored)
    if target.kind == "person":
        return bool(visibility["persons"])
    if target.kind == "absenceType":
        return bool(visibility["absenceTypes"])
    if target.kind == "tag":
        return True
    if target.kind == "project":
        return _listed(visibility["projects"], target)
    if target.kind == "task":
        return _listed(visibility["tasks"], target)
    if target.assigned:
        return True
    records = visibility["timeRecords"]
    if records is None:
        return False
    if target.absence:
        return bool(records["absences"])
    return (_among(records["projectCategories"], target.category_ids)
            and _among(records["taskCategories"], target.task_category_ids))


# -- edits (each returns the new visibility; ValueError names what is wrong) ----------------


def switch(stored: Mapping[str, Any] | None, key: str, enabled: bool) -> dict[str, Any]:
    """persons / absenceTypes: on or off; projects / tasks / timeRecords: on (everywhere)
    or off (nowhere)."""
    visibility = normalised(stored)
    if key in ("persons", "absenceTypes"):
        visibility[key] = enabled
    elif key == "timeRecords":
        visibility[key] = initial()["timeRecords"] if enabled else None
    else:
        visibility[key] = ([] if visibility[key] is None else visibility[key]) if enabled \
            else None
    return visibility


def edit_time_records(stored: Mapping[str, Any] | None, key: str, value: Any
                      ) -> dict[str, Any]:
    visibility = normalised(stored)
    if visibility["timeRecords"] is None:
        raise ValueError("the field does not show on time records "
                         "(editCustomFieldVisibilityTimeRecords first)")
    visibility["timeRecords"] = {**visibility["timeRecords"], key: value}
    return visibility


def _levels(levels: Iterable[int | None]) -> list[int]:
    found: list[int] = []
    for level in levels:
        if level is None or level < 0 or level > 50:
            raise ValueError("levels must be whole numbers from 0 to 50")
        if level not in found:
            found.append(level)
    return sorted(found)


def edit_category(stored: Mapping[str, Any] | None, key: str, category_id: str,
                  levels: Iterable[int | None] | None, action: str) -> dict[str, Any]:
    """add / edit / remove the entry of a category in `projects` or `tasks`."""
    visibility = normalised(stored)
    entries = list(visibility[key] or [])
    present = [entry for entry in entries if entry["categoryId"] == category_id]
    if action == "add" and present:
        raise ValueError("the category is already listed (edit it instead)")
    if action != "add" and not present:
        raise ValueError("the category is not listed")
    entries = [entry for entry in entries if entry["categoryId"] != category_id]
    if action != "remove":
        entries.append({"categoryId": category_id, "levels": _levels(levels or [])})
    visibility[key] = entries if entries or action != "remove" else []
    return visibility
