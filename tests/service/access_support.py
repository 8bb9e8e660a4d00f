"""Set-up helpers of the access tests: items, tags and assignments made over GraphQL."""

from __future__ import annotations

from typing import Any

from tests.support import Org


async def project(org: Org, name: str, parent_id: str | None = None) -> str:
    data = await org.admin.gql(
        "mutation($n: SvcName!, $p: SvcId) { addProject(name: $n, parentId: $p) { id } }",
        {"n": name, "p": parent_id},
    )
    return str(data["addProject"]["id"])


async def absence_type(org: Org, name: str) -> str:
    data = await org.admin.gql(
        "mutation($n: SvcName!) { addAbsenceType(name: $n) { id } }", {"n": name}
    )
    return str(data["addAbsenceType"]["id"])


async def expense_type(org: Org, name: str) -> str:
    data = await org.admin.gql(
        "mutation($n: SvcName!) { addExpenseType(name: $n) { id } }", {"n": name}
    )
    return str(data["addExpenseType"]["id"])


async def tag(org: Org, name: str, parent_id: str | None = None) -> str:
    data = await org.admin.gql(
        "mutation($n: SvcName!, $p: SvcId) { addTag(name: $n, parentId: $p) { id } }",
        {"n": name, "p": parent_id},
    )
    return str(data["addTag"]["id"])


async def tag_person(org: Org, tag_id: str, person_id: str) -> None:
    await org.admin.gql(
        "mutation($t: SvcId!, $p: SvcId!) { tagPerson(tagId: $t, personId: $p) { id } }",
        {"t": tag_id, "p": person_id},
    )


def link_mutation(operation: str, member_argument: str, item_argument: str) -> str:
    return (
        f"mutation($m: SvcId!, $i: SvcId!) {{ {operation}({member_argument}: $m, "
        f"{item_argument}: $i) {{ id sourceId sourceKey targetId targetKey signature }} }}"
    )


async def link(org: Org, operation: str, member_argument: str, member_id: str,
               item_argument: str, item_id: str) -> dict[str, Any]:
    data = await org.admin.gql(
        link_mutation(operation, member_argument, item_argument), {"m": member_id, "i": item_id}
    )
    return dict(data[operation])


async def switch(org: Org, what: str, available: bool) -> dict[str, bool]:
    operation = f"editOrganisation{what}Availability"
    data = await org.admin.gql(
        f"mutation($a: Boolean!) {{ {operation}(available: $a) {{ availability {{ "
        "projects subProjects tasks absenceTypes expenseTypes customFields scheduleTypes } } }",
        {"a": available},
    )
    return dict(data[operation]["availability"])
