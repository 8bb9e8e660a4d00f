"""Who may use a project, subproject, absence type or expense type: the pure rule.

The account's "Show or hide by default" switches say whether an item is shown to everyone.
Each item has a "Who has access?" list of people and tags; a tag on the list includes its
descendant tags, so the rule is given the person's tags *with their ancestors*. When the
default shows the item to all, the list is an exclusion list; otherwise it is the list of
those who may use it. A project's own override (Available / Unavailable to everyone) wins
over everything else.

The "Show all secondary projects" switch decides how a subproject's list reads. On, it is an
exclusion list within the parent's access (an empty list: the parent's access, inherited). Off,
it is the list of those who may use it, whatever the parent's list: an empty list grants
nobody (a member of the parent project no longer gets every subproject) unless a project
above is Available to everyone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

ItemKind = Literal["project", "absenceType", "expenseType", "customField"]

# Names of the switches, as in SvcAvailability, with the mutation that edits each.
SWITCHES = {
    "projects": "editOrganisationProjectAvailability",
    "subProjects": "editOrganisationSubProjectAvailability",
    "tasks": "editOrganisationTaskAvailability",
    "absenceTypes": "editOrganisationAbsenceTypeAvailability",
    "expenseTypes": "editOrganisationExpenseTypeAvailability",
    "customFields": "editOrganisationCustomFieldAvailability",
    "scheduleTypes": "editOrganisationScheduleTypeAvailability",
}

LABELS: dict[ItemKind, str] = {
    "project": "project",
    "absenceType": "absence type",
    "expenseType": "expense type",
    "customField": "custom field",
}


@dataclass(frozen=True)
class AccessDefaults:
    """The account-wide "show by default" switches (all on unless an admin turned one off)."""

    projects: bool = True
    subProjects: bool = True
    tasks: bool = True
    absenceTypes: bool = True
    expenseTypes: bool = True
    customFields: bool = True
    scheduleTypes: bool = True

    @classmethod
    def from_settings(cls, stored: Mapping[str, Any] | None) -> AccessDefaults:
        """From the organisation's stored `availability` setting (missing switches are on)."""
        values = {name: bool((stored or {}).get(name, True)) for name in SWITCHES}
        return cls(**values)

    def as_dict(self) -> dict[str, bool]:
        return {name: bool(getattr(self, name)) for name in SWITCHES}

    def shows(self, kind: ItemKind) -> bool:
        if kind == "project":
            return self.projects
        if kind == "absenceType":
            return self.absenceTypes
        if kind == "customField":
            return self.customFields
        return self.expenseTypes


@dataclass(frozen=True)
class AccessItem:
    """One item and its "Who has access?" list; `parent` is set for a subproject and
    `override` only for projects (None: the account default applies)."""

    kind: ItemKind
    id: str
    name: str
    person_ids: frozenset[str] = field(default_factory=frozenset)
    tag_ids: frozenset[str] = field(default_factory=frozenset)
    override: bool | None = None
    parent: AccessItem | None = None

    @property
    def label(self) -> str:
        return f"the {LABELS[self.kind]} {self.name}"


def _available_to_everyone(item: AccessItem | None) -> bool:
    """Whether the nearest override up the tree is "Available to everyone"."""
    while item is not None:
        if item.override is not None:
            return item.override
        item = item.parent
    return False


def has_access(
    item: AccessItem,
    person_id: str,
    person_tags_with_ancestors: frozenset[str] | set[str],
    settings: AccessDefaults,
) -> bool:
    """Whether the person may use the item (see the module docstring for the rule)."""
    if item.override is not None:
        return item.override
    listed = person_id in item.person_ids or not item.tag_ids.isdisjoint(
        person_tags_with_ancestors
    )
    if item.parent is not None:
        if settings.subProjects:
            inherited = has_access(item.parent, person_id, person_tags_with_ancestors, settings)
            return inherited and not listed
        return listed or _available_to_everyone(item.parent)
    if settings.shows(item.kind):
        return not listed
    return listed
