"""Set-up over GraphQL alone, for tests that drive a `timebot serve` subprocess (no access to
its sessions): a manager who approves, by the project managers' stage, the timesheets their
people submitted."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from tests.service.test_approvals_support import WEEK, WEEK_END

HOUR = 3_600_000
ADD_PERSON = ("mutation($n: SvcName!, $e: SvcEmail!, $r: SvcId!) { addPerson(name: $n, "
              "email: $e, roleId: $r) { id } }")


async def gql(http: httpx.AsyncClient, base: str, key: str, query: str, **variables: Any) -> Any:
    """`data` of POST /graphql with `key`; asserts HTTP 200 and no errors."""
    response = await http.post(f"{base}/graphql", json={"query": query, "variables": variables},
                               headers={"apikey": key})
    body = response.json()
    assert response.status_code == 200 and not body.get("errors"), body
    return body["data"]


async def submitted_to_max(
    http: httpx.AsyncClient, base: str, admin: str, domain: str, count: int,
    each: Callable[[int, str, str], None] = lambda _index, _id, _email: None,
) -> list[str]:
    """Max (max@`domain`), a manager, approves at the only stage (ppm, any one); `count`
    employees erin<N>@`domain` each log 2 h in WEEK and submit it. `each(index, id, email)`
    is told of every employee. Their ids, in order."""
    roles = (await gql(http, base, admin, "{ getRoles { id name } }"))["getRoles"]
    role_of = {role["name"].lower(): role["id"] for role in roles}
    max_id = (await gql(http, base, admin, ADD_PERSON, n="Max", e=f"max@{domain}",
                        r=role_of["manager"]))["addPerson"]["id"]
    await gql(http, base, admin, "mutation { editOrganisationApprovalStages(stages: "
              "[{type: \"ppm\", quorum: \"any\"}]) { id } }")
    people = []
    for index in range(count):
        address = f"erin{index}@{domain}"
        person = (await gql(http, base, admin, ADD_PERSON, n=f"Erin {index}", e=address,
                            r=role_of["employee"]))["addPerson"]["id"]
        await gql(http, base, admin, "mutation($m: SvcId!, $p: SvcId!) { "
                  "makeManagerOfPerson(managerId: $m, personId: $p) { id } }", m=max_id, p=person)
        await gql(http, base, admin, "mutation($s: SvcTimestamp!, $p: SvcId!) { "
                  "addTimeRecord(startTime: $s, duration: 7200000, personId: $p) { id } }",
                  s=WEEK + 9 * HOUR, p=person)
        await gql(http, base, admin, "mutation($p: SvcId!, $s: SvcTimestamp!, "
                  "$e: SvcTimestamp!) { submitTimesheet(personId: $p, startTime: $s, "
                  "endTime: $e) { id } }", p=person, s=WEEK, e=WEEK_END)
        each(index, person, address)
        people.append(person)
    return people
