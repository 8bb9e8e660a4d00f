"""An employee is refused every operation of a list: each mutation called with the reference
signature's arguments (placeholder values of their types), refused at the field."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from tests.service.spec_tables import load_implemented
from tests.support import Org


async def assert_employee_refused(org: Org, operations: Iterable[str],
                                  value_of: Callable[[str], Any], selection: str = "id") -> None:
    signatures = {op["name"]: op for op in load_implemented()}
    employee = await org.add_member("Eve")
    for name in operations:
        arguments: dict[str, str] = signatures[name]["arguments"]
        declared = ", ".join(f"${a}: {t}" for a, t in arguments.items())
        passed = ", ".join(f"{a}: ${a}" for a in arguments)
        query = f"mutation({declared}) {{ {name}({passed}) {{ {selection} }} }}"
        variables = {a: value_of(t) for a, t in arguments.items()}
        assert await employee.gql.denied(query, variables) == [f"Mutation.{name}"], name
