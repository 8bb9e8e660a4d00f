"""Access: the permission catalogue of roles (`permissions`), who may use which project,
absence type and expense type (`models`, `rules`, `items`), who manages a project
(`project_managers`) and who carries a tag (`tag_members`), the access links as one table
(`links`), and the resolvers of access and roles."""

from typing import TYPE_CHECKING

from service.face import face_attribute

if TYPE_CHECKING:
    from service.access.items import (
        access_defaults,
        check_expense_access,
        check_owner_access,
        listable_project_ids,
    )
    from service.access.links import relation
    from service.access.permissions import (
        APPROVALS,
        AUDIT,
        BILLING_RATES,
        EXPENSES,
        MANAGE,
        PEOPLE,
        PROJECTS,
        REPORTS,
        SETTINGS,
        TAGS,
        TASKS,
        VIEW,
        guard_administrators,
        has,
        require,
        requirer,
    )
    from service.access.project_managers import managed_project_ids, project_manager_ids
    from service.access.rules import AccessItem, has_access
    from service.access.tag_members import (
        person_tag_ids,
        person_tags,
        remember_tags_of,
        remember_untagged,
    )

__all__ = [
    "APPROVALS",
    "AUDIT",
    "BILLING_RATES",
    "EXPENSES",
    "MANAGE",
    "PEOPLE",
    "PROJECTS",
    "REPORTS",
    "SETTINGS",
    "TAGS",
    "TASKS",
    "VIEW",
    "AccessItem",
    "access_defaults",
    "check_expense_access",
    "check_owner_access",
    "guard_administrators",
    "has",
    "has_access",
    "listable_project_ids",
    "managed_project_ids",
    "person_tag_ids",
    "person_tags",
    "project_manager_ids",
    "relation",
    "remember_tags_of",
    "remember_untagged",
    "require",
    "requirer",
]


def __getattr__(name: str) -> object:
    return face_attribute(__name__, name)
