"""The access rule, table-driven: every combination of the account default, a person or a
tag (or an ancestor tag) on the list, a project's override and a subproject inheriting."""

from __future__ import annotations

import pytest

from service.access.rules import AccessDefaults, AccessItem, ItemKind, has_access

ERIN = "erin"
# Erin carries "backend"; its ancestor is "engineering" (the rule gets both).
ERIN_TAGS = frozenset({"backend", "engineering"})
ON = AccessDefaults()
OFF = AccessDefaults(projects=False, subProjects=False, absenceTypes=False, expenseTypes=False)


def item(kind: ItemKind = "project", *, people: set[str] | None = None,
         tags: set[str] | None = None, override: bool | None = None,
         parent: AccessItem | None = None) -> AccessItem:
    return AccessItem(kind, "x", "Apollo", frozenset(people or ()), frozenset(tags or ()),
                      override, parent)


LISTS = {
    "nobody listed": {},
    "person listed": {"people": {ERIN}},
    "someone else listed": {"people": {"frank"}},
    "tag listed": {"tags": {"backend"}},
    "ancestor tag listed": {"tags": {"engineering"}},
    "other tag listed": {"tags": {"sales"}},
}
LISTED = {"person listed", "tag listed", "ancestor tag listed"}


@pytest.mark.parametrize("kind", ["project", "absenceType", "expenseType"])
@pytest.mark.parametrize("default_on", [True, False])
@pytest.mark.parametrize("case", sorted(LISTS))
def test_default_and_list(kind: ItemKind, default_on: bool, case: str) -> None:
    settings = ON if default_on else OFF
    expected = (case not in LISTED) if default_on else (case in LISTED)
    assert has_access(item(kind, **LISTS[case]), ERIN, ERIN_TAGS, settings) is expected  # type: ignore[arg-type]


def test_a_descendant_tag_on_the_list_does_not_grant_its_parent() -> None:
    """Listing "backend" includes its descendants, not a person carrying only its parent."""
    assert not has_access(item(tags={"backend"}), ERIN, frozenset({"engineering"}), OFF)


@pytest.mark.parametrize("override", [True, False])
@pytest.mark.parametrize("default_on", [True, False])
@pytest.mark.parametrize("case", sorted(LISTS))
def test_project_override_wins(override: bool, default_on: bool, case: str) -> None:
    settings = ON if default_on else OFF
    project = item(override=override, **LISTS[case])  # type: ignore[arg-type]
    assert has_access(project, ERIN, ERIN_TAGS, settings) is override


def test_the_switches_are_per_kind() -> None:
    only_projects_hidden = AccessDefaults(projects=False)
    assert not has_access(item("project"), ERIN, ERIN_TAGS, only_projects_hidden)
    assert has_access(item("absenceType"), ERIN, ERIN_TAGS, only_projects_hidden)
    assert has_access(item("expenseType"), ERIN, ERIN_TAGS, only_projects_hidden)
    assert AccessDefaults.from_settings({"projects": False}) == only_projects_hidden
    assert AccessDefaults.from_settings(None) == ON


# A subproject: (parent's list, parent override, subproject's list, subProjects default)
# -> access.
OPEN_PARENT = item()
CLOSED_PARENT = item(people={ERIN})  # with default on: Erin is excluded
GRANTING_PARENT = item(people={ERIN})  # with default off: Erin is granted


@pytest.mark.parametrize(
    ("settings", "parent", "own", "expected"),
    [
        # no list of its own: shown by default, the parent decides; hidden, nobody has it
        (ON, OPEN_PARENT, {}, True),
        (ON, CLOSED_PARENT, {}, False),
        (OFF, GRANTING_PARENT, {}, False),
        (OFF, OPEN_PARENT, {}, False),
        (ON, item(override=False), {}, False),
        (OFF, item(override=True), {}, True),
        # a list of its own, shown by default: an exclusion list, within the parent's access
        (ON, OPEN_PARENT, {"people": {ERIN}}, False),
        (ON, OPEN_PARENT, {"tags": {"engineering"}}, False),
        (ON, OPEN_PARENT, {"people": {"frank"}}, True),
        (ON, CLOSED_PARENT, {"people": {"frank"}}, False),
        # a list of its own, hidden by default: the list grants, whatever the parent
        (OFF, OPEN_PARENT, {"people": {ERIN}}, True),
        (OFF, OPEN_PARENT, {"tags": {"backend"}}, True),
        (OFF, GRANTING_PARENT, {"people": {"frank"}}, False),
        # the subproject's own override wins
        (ON, CLOSED_PARENT, {"override": True}, True),
        (OFF, GRANTING_PARENT, {"override": False}, False),
    ],
)
def test_subprojects(settings: AccessDefaults, parent: AccessItem, own: dict[str, object],
                     expected: bool) -> None:
    sub = item(parent=parent, **own)  # type: ignore[arg-type]
    assert has_access(sub, ERIN, ERIN_TAGS, settings) is expected


def test_a_grandchild_inherits_through_its_parent() -> None:
    root = item(people={ERIN})
    child = item(parent=root)
    grandchild = item(parent=child)
    assert not has_access(grandchild, ERIN, ERIN_TAGS, ON)
    assert has_access(grandchild, ERIN, ERIN_TAGS, AccessDefaults(projects=False))
    # Secondary projects hidden by default: the parent's access grants no subproject.
    assert not has_access(grandchild, ERIN, ERIN_TAGS, OFF)
    assert has_access(item(parent=child, people={ERIN}), ERIN, ERIN_TAGS, OFF)


def test_the_label_names_the_item() -> None:
    assert item("absenceType").label == "the absence type Apollo"
    assert item().label == "the project Apollo"
