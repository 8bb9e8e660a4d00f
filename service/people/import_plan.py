"""What importing people changes: pure. `plan(rows, existing)` compares the rows read from the
file (`service.people.csv_import.parse`) with the organisation and says, row by row, whether the
person is added, updated (which of name, role, manager, tags) or unchanged, or why the row is
refused: an unknown or archived role, a manager neither in the file nor in the organisation
(or on a refused row), a cycle of managers, an archived tag, the organisation's last active
administrator losing the role.

The file is the truth about the people it lists: their name, role (empty: the employee
role), manager (empty: none; their other managers are removed) and tags (empty: none).
People the file does not list are left as they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from service.people.csv_import import Refusal, Row, tag_key

ROLE_ADMIN, ROLE_EMPLOYEE = "admin", "employee"  # service.people.models's kinds

Kind = Literal["add", "update", "unchanged"]


@dataclass(frozen=True)
class RoleInfo:
    id: str
    name: str
    kind: str
    archived: bool = False


@dataclass(frozen=True)
class TagInfo:
    id: str
    name: str
    archived: bool = False


@dataclass(frozen=True)
class ExistingPerson:
    id: str
    name: str
    email: str
    role_id: str
    archived: bool = False
    managers: frozenset[str] = frozenset()  # their managers' e-mail addresses
    tags: frozenset[str] = frozenset()  # tag_key of each tag they carry


@dataclass(frozen=True)
class Existing:
    people: Mapping[str, ExistingPerson]  # by e-mail (lower case)
    roles: Sequence[RoleInfo]
    tags: Mapping[str, TagInfo]  # by tag_key


@dataclass(frozen=True)
class Change:
    row: Row
    kind: Kind
    role: RoleInfo
    person_id: str | None = None  # None: a person to add
    fields: tuple[str, ...] = ()  # for an update: which of name, role, manager, tags
    managers_added: tuple[str, ...] = ()  # e-mail addresses
    managers_removed: tuple[str, ...] = ()
    tags_added: tuple[str, ...] = ()  # tag_key
    tags_removed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    changes: tuple[Change, ...]
    refusals: tuple[Refusal, ...]
    new_tags: tuple[str, ...] = ()  # names of tags to create, as first written
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def writes(self) -> bool:
        return bool(self.new_tags) or any(c.kind != "unchanged" for c in self.changes)


def find_role(written: str, roles: Sequence[RoleInfo]) -> RoleInfo | str:
    """The role a cell names (its name, else its kind, case-blind; empty: the employee kind),
    or why there is none."""
    wanted = " ".join(written.split()).casefold() or ROLE_EMPLOYEE
    ordered = sorted(roles, key=lambda r: (r.name.casefold(), r.id))
    for matches in ([r for r in ordered if r.name.casefold() == wanted],
                    [r for r in ordered if r.kind == wanted]):
        active = [r for r in matches if not r.archived]
        if active:
            return active[0]
        if matches:
            return f"the role {matches[0].name!r} is archived"
    names = ", ".join(r.name for r in ordered if not r.archived)
    return f"unknown role {written!r} (the organisation's roles: {names})"


def _cyclic(edges: Mapping[str, Iterable[str]]) -> dict[str, list[str]]:
    """For each node on a cycle, one cycle through it (as the path back to itself)."""
    on_cycle: dict[str, list[str]] = {}
    for start in edges:
        if start in on_cycle:
            continue
        # depth-first from `start`, looking for a way back to it
        stack: list[tuple[str, list[str]]] = [(start, [start])]
        visited: set[str] = set()
        while stack:
            node, path = stack.pop()
            for target in edges.get(node, ()):
                if target == start:
                    for member in path:
                        on_cycle.setdefault(member, path[path.index(member):]
                                            + path[:path.index(member)] + [member])
                    stack.clear()
                    break
                if target not in visited:
                    visited.add(target)
                    stack.append((target, [*path, target]))
    return on_cycle


def _manager_refusals(
    rows: dict[str, Row], existing: Existing, refused: dict[str, int]
) -> list[Refusal]:
    """Refuses (removing them from `rows`) the rows whose manager is unknown, on a refused
    row (`refused`: their e-mail -> row), or in a cycle, until none is left to refuse."""
    refusals: list[Refusal] = []
    while True:
        found: list[Refusal] = []
        for row in list(rows.values()):
            manager = row.manager
            if manager is None or manager in rows or manager in existing.people:
                continue
            if manager in refused:
                reason = f"the manager {manager} is on row {refused[manager]}, which is refused"
            else:
                reason = f"the manager {manager} is neither in the file nor in the organisation"
            found.append(Refusal(row.line, "manager", reason))
        if not found:
            edges: dict[str, Iterable[str]] = {
                email: person.managers for email, person in existing.people.items()
            }
            edges.update({email: (row.manager,) if row.manager else ()
                          for email, row in rows.items()})
            for email, cycle in _cyclic(edges).items():
                if email in rows:
                    found.append(Refusal(rows[email].line, "manager",
                                         "cycle of managers: " + " -> ".join(cycle)))
        if not found:
            return sorted(refusals, key=lambda r: r.line)
        lines = {refusal.line for refusal in found}
        for email, row in list(rows.items()):
            if row.line in lines:
                refused[email] = row.line
                del rows[email]
        refusals.extend(found)


def plan(rows: Sequence[Row], existing: Existing, refused: Sequence[Refusal] = ()) -> Plan:
    """What importing `rows` changes in the organisation `existing` describes; `refused`: the
    rows `parse` refused (a manager on one of them is refused too), returned with the rest."""
    refusals: list[Refusal] = list(refused)
    valid: dict[str, Row] = {}
    roles: dict[str, RoleInfo] = {}
    for row in rows:
        role = find_role(row.role, existing.roles)
        if isinstance(role, str):
            refusals.append(Refusal(row.line, "role", role, row.email))
            continue
        archived = [t for t in row.tags if (info := existing.tags.get(tag_key(t))) is not None
                    and info.archived]
        if archived:
            refusals.append(Refusal(row.line, "tags", f"the tag {archived[0]!r} is archived",
                                    row.email))
            continue
        valid[row.email] = row
        roles[row.email] = role
    on_refused = {r.email: r.line for r in refusals if r.email and r.email not in valid}
    refusals.extend(_manager_refusals(valid, existing, on_refused))
    refusals.extend(_last_admin_refusals(valid, roles, existing))
    changes = [_change(row, roles[email], existing) for email, row in valid.items()]
    new_tags: dict[str, str] = {}
    for row in valid.values():
        for tag in row.tags:
            if tag_key(tag) not in existing.tags:
                new_tags.setdefault(tag_key(tag), tag)
    counts = {"added": 0, "updated": 0, "unchanged": 0, "refused": len(refusals)}
    for change in changes:
        counts[{"add": "added", "update": "updated", "unchanged": "unchanged"}[change.kind]] += 1
    return Plan(tuple(sorted(changes, key=lambda c: c.row.line)),
                tuple(sorted(refusals, key=lambda r: r.line)), tuple(new_tags.values()), counts)


def _last_admin_refusals(
    rows: dict[str, Row], roles: Mapping[str, RoleInfo], existing: Existing
) -> list[Refusal]:
    """The organisation keeps an active administrator: rows taking the role from every one of
    them are refused (unless the file makes another one)."""
    admin_ids = {r.id for r in existing.roles if r.kind == ROLE_ADMIN}
    remaining = [p for p in existing.people.values() if not p.archived
                 and p.role_id in admin_ids
                 and (p.email not in rows or roles[p.email].kind == ROLE_ADMIN)]
    if remaining or any(roles[e].kind == ROLE_ADMIN for e in rows):
        return []
    demoted = [e for e in rows if e in existing.people and existing.people[e].role_id in admin_ids
               and not existing.people[e].archived]
    refusals = [Refusal(rows[e].line, "role", "the organisation must keep at least one active "
                        "administrator") for e in demoted]
    for email in demoted:
        del rows[email]
    return refusals


def _change(row: Row, role: RoleInfo, existing: Existing) -> Change:
    person = existing.people.get(row.email)
    wanted_tags = {tag_key(t) for t in row.tags}
    wanted_managers = {row.manager} if row.manager else set()
    if person is None:
        return Change(row, "add", role, None, (), tuple(sorted(wanted_managers)), (),
                      tuple(sorted(wanted_tags)), ())
    fields = []
    if person.name != row.name:
        fields.append("name")
    if person.role_id != role.id:
        fields.append("role")
    managers_added = tuple(sorted(wanted_managers - person.managers))
    managers_removed = tuple(sorted(person.managers - wanted_managers))
    if managers_added or managers_removed:
        fields.append("manager")
    tags_added = tuple(sorted(wanted_tags - person.tags))
    tags_removed = tuple(sorted(person.tags - wanted_tags))
    if tags_added or tags_removed:
        fields.append("tags")
    return Change(row, "update" if fields else "unchanged", role, person.id, tuple(fields),
                  managers_added, managers_removed, tags_added, tags_removed)
