"""The permission catalogue: what a role may do beyond its people's own records.

One table, `CATALOGUE`: each permission's name (as `editRoleAuthorisations` and
`SvcRole.authorisations` spell it), what it governs, and its level for each built-in role
kind. A level is `none`, `view` or `manage` (manage includes view). The built-in kinds keep
the rights they always had: an administrator has every permission whatever the role's
authorisations say, a manager and an employee the table's defaults (administrators alone
edited the structure, so those defaults are `none` for every edit). A role's authorisations
add to its kind's defaults: a non-empty `view` grants view, a non-empty `manage` manage.
A custom role (`addRole`) has no defaults: exactly its authorisations.

Roles themselves (`addRole`, `editRoleAuthorisations` …) and the organisation's deletion stay
with administrators: a permission to grant permissions would be every permission.

The checks are synchronous: the role, authorisations included, is read with the key by
authentication's one statement (`service/graphql/auth.py`), so a check costs no statement.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from service.errors import PermissionDenied
from service.graphql.context import RequestContext
from service.models import ROLE_ADMIN, ROLE_EMPLOYEE, ROLE_MANAGER, Person, Role

NONE, VIEW, MANAGE = "none", "view", "manage"
_RANK = {NONE: 0, VIEW: 1, MANAGE: 2}
# The targets a permission's view / manage lists may name.
TARGETS = ("all",)


@dataclass(frozen=True)
class Permission:
    name: str
    governs: str
    admin: str
    manager: str
    employee: str


BILLING_RATES = "billingRates"
APPROVALS = "approvals"
PEOPLE = "people"
PROJECTS = "projects"
TASKS = "tasks"
TAGS = "tags"
EXPENSES = "expenses"
REPORTS = "reports"
SETTINGS = "settings"
AUDIT = "audit"

# name, what it governs (view / manage), admin, manager, employee
CATALOGUE: tuple[Permission, ...] = tuple(Permission(*row) for row in (
    (BILLING_RATES, "view: billing and cost rates and the amounts they make; manage: add, "
     "edit and delete rates at every level", MANAGE, NONE, NONE),
    (APPROVALS, "manage: the approval workflow (stages, approvers, quorum) and the "
     "timesheet settings", MANAGE, NONE, NONE),
    (PEOPLE, "manage: add, duplicate, edit, archive and delete people, their roles, "
     "managers and allowances", MANAGE, NONE, NONE),
    (PROJECTS, "manage: projects, subprojects, their categories, managers, access lists "
     "and timesheet settings", MANAGE, NONE, NONE),
    (TASKS, "manage: tasks, their tree, board, categories, owners and plannings",
     MANAGE, NONE, NONE),
    (TAGS, "manage: tags, their categories and what they are put on", MANAGE, NONE, NONE),
    (EXPENSES, "manage: expense types and who may record them", MANAGE, NONE, NONE),
    (REPORTS, "view: run reports (over the records the person may see)", MANAGE, VIEW, VIEW),
    (SETTINGS, "manage: the organisation's settings, localisation, holidays, work "
     "schedules, absence types, accrual, webhooks", MANAGE, NONE, NONE),
    (AUDIT, "view: the audit trail of the whole organisation (without it: one's own)",
     MANAGE, NONE, NONE),
))
BY_NAME: Mapping[str, Permission] = {p.name: p for p in CATALOGUE}
NAMES = tuple(BY_NAME)


def default_level(permission: Permission, kind: str) -> str:
    return {ROLE_ADMIN: permission.admin, ROLE_MANAGER: permission.manager,
            ROLE_EMPLOYEE: permission.employee}.get(kind, NONE)


def role_level(role: Role, name: str) -> str:
    """The level of one permission a role has: its kind's default raised by its own
    authorisations (an administrator's role: manage, always)."""
    permission = BY_NAME[name]
    if role.kind == ROLE_ADMIN:
        return MANAGE
    level = default_level(permission, role.kind)
    granted: Any = (role.authorisations or {}).get(name) or {}
    if granted.get("manage"):
        return MANAGE
    if granted.get("view") and _RANK[level] < _RANK[VIEW]:
        return VIEW
    return level


def has(context: RequestContext, name: str, level: str = MANAGE) -> bool:
    return _RANK[role_level(context.person.role, name)] >= _RANK[level]


def require(context: RequestContext, name: str, what: str, level: str = MANAGE) -> None:
    """Refuses (PermissionDenied, naming the permission) a caller whose role lacks it."""
    if not has(context, name, level):
        raise PermissionDenied(f"to {what} your role needs the {name!r} permission ({level})")


def effective(role: Role) -> list[dict[str, Any]]:
    """Every permission of the catalogue as SvcAuthorisation, at the role's level."""
    result = []
    for permission in CATALOGUE:
        level = role_level(role, permission.name)
        result.append({
            "name": permission.name, "targets": list(TARGETS),
            "view": list(TARGETS) if _RANK[level] >= _RANK[VIEW] else [],
            "manage": list(TARGETS) if level == MANAGE else [],
        })
    return result


def requirer(name: str) -> Callable[..., None]:
    """The check a module of one permission's operations uses:
    `require_permission(context, "edit tags")`."""

    def require_permission(context: RequestContext, what: str = "edit the structure") -> None:
        require(context, name, what)

    return require_permission


def guard_administrators(context: RequestContext, persons: Iterable[Person],
                         what: str = "edit an administrator") -> None:
    """Only an administrator edits an administrator (their e-mail is their sign-in) or gives
    the administrator's role: the people permission alone is not every permission."""
    if context.is_admin:
        return
    if any(p.role.kind == ROLE_ADMIN for p in persons):
        raise PermissionDenied(f"only an administrator may {what}")
