"""The import's pure planning: what the CLI test does not reach (archived roles and tags, the
last administrator, chains of refusals, the file's own shape)."""

from __future__ import annotations

import pytest

from service.people.csv_import import ImportFileError, parse
from service.people.import_plan import (
    Existing,
    ExistingPerson,
    RoleInfo,
    TagInfo,
    find_role,
    plan,
)

ROLES = [RoleInfo("r1", "Admin", "admin"), RoleInfo("r2", "Manager", "manager"),
         RoleInfo("r3", "Employee", "employee"), RoleInfo("r4", "Intern", "employee", True)]
ROOT = ExistingPerson("p0", "Root", "root@x.example", "r1")


def _plan(text: str, people: dict[str, ExistingPerson] | None = None,
          tags: dict[str, TagInfo] | None = None) -> list[str]:
    rows, refused = parse("name,e-mail,role,manager,tags\n" + text)
    planned = plan(rows, Existing(people if people is not None else {ROOT.email: ROOT},
                                  ROLES, tags or {}), refused)
    return [str(r) for r in planned.refusals] + [
        f"{c.kind} {c.row.email} {','.join(c.fields)}" for c in planned.changes]


def test_roles_by_name_or_kind_archived_ones_refused() -> None:
    assert find_role("", ROLES) == ROLES[2]
    assert find_role("MANAGER", ROLES) == ROLES[1]
    assert find_role("Intern", ROLES) == "the role 'Intern' is archived"


def test_the_last_administrator_keeps_the_role() -> None:
    assert _plan("Root,root@x.example,employee,,\n") == [
        "row 2: role: the organisation must keep at least one active administrator"]
    # unless the file makes another one
    assert _plan("Root,root@x.example,employee,,\nAda,ada@x.example,admin,,\n") == [
        "update root@x.example role", "add ada@x.example "]


def test_refusals_follow_managers_down_the_file() -> None:
    assert _plan("A,a@x.example,wizard,,\nB,b@x.example,,a@x.example,\n"
                 "C,c@x.example,,b@x.example,\n") == [
        "row 2: role: unknown role 'wizard' (the organisation's roles: Admin, Employee, "
        "Manager)",
        "row 3: manager: the manager a@x.example is on row 2, which is refused",
        "row 4: manager: the manager b@x.example is on row 3, which is refused",
    ]


def test_a_cycle_through_the_organisation_and_oneself() -> None:
    boss = ExistingPerson("p1", "Boss", "boss@x.example", "r2", managers=frozenset(
        {"me@x.example"}))
    assert _plan("Me,me@x.example,,boss@x.example,\n",
                 {ROOT.email: ROOT, boss.email: boss}) == [
        "row 2: manager: cycle of managers: me@x.example -> boss@x.example -> me@x.example"]
    assert _plan("Me,me@x.example,,ME@x.example,\n") == [
        "row 2: manager: cycle of managers: me@x.example -> me@x.example"]


def test_archived_tags_and_hostile_cells() -> None:
    assert _plan("A,a@x.example,,,Old|new\n", tags={"old": TagInfo("t1", "Old", True)}) == [
        "row 2: tags: the tag 'Old' is archived"]
    assert _plan("A\x00,a@x.example,,,\n".replace("\x00", "\x07")) == [
        "row 2: name: contains control characters"]
    assert _plan("A,a@x.example,,,x\u2028y\n") == ["row 2: tags: contains control characters"]
    assert _plan(",a@x.example,,,\nB,b@x.example,,,,extra\n") == [
        "row 2: name: empty", "row 3: row: 6 cells, the header has 5"]


@pytest.mark.parametrize(("text", "message"), [
    ("", "the file is empty"),
    ("name,phone\n", "unknown column 'phone'"),
    ("name,name,e-mail\n", "the column name appears twice"),
    ("name,role\n", "no e-mail column"),
    ("name,e-mail\nA,\x00\n", "not text"),
])
def test_files_refused_whole(text: str, message: str) -> None:
    with pytest.raises(ImportFileError, match=message):
        parse(text)
