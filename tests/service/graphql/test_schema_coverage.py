"""The running schema covers the specification's operations with the reference signatures.

The operations, their argument names and their reference signatures are the project's own
list, `spec_operations.json` (written from `../shared` by `scripts/export_spec_operations.py`).
The running schema is read by introspection over HTTP and checked against it. When the
specification is beside the checkout, a cross-check tells whether the list is still true to it.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.service.spec_tables import (
    REFERENCE,
    SPEC,
    load_implemented,
    load_operations,
    read_implemented,
    read_operations,
)
from tests.support import LiveServer, new_org

OPERATIONS = load_operations()
IMPLEMENTED = load_implemented()


def _id(operation: dict[str, Any]) -> str:
    return f"{operation['root']}.{operation['name']}"


def _type_string(type_ref: dict[str, Any]) -> str:
    kind = type_ref["kind"]
    if kind == "NON_NULL":
        return _type_string(type_ref["ofType"]) + "!"
    if kind == "LIST":
        return "[" + _type_string(type_ref["ofType"]) + "]"
    return str(type_ref["name"])


_TYPE_REF = (
    "kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } }"
)
INTROSPECTION = (
    "{ __schema { queryType { name } mutationType { name } types { name fields { name "
    f"args {{ name type {{ {_TYPE_REF} }} }} type {{ {_TYPE_REF} }} }} }} }} }}"
)

_running: dict[str, dict[str, dict[str, Any]]] = {}


@pytest.fixture
async def running_schema(live: LiveServer, http: httpx.AsyncClient) -> dict[str, dict[str, Any]]:
    """{"Query": {name: field}, "Mutation": {...}} of the running server, read once per backend."""
    if live.base_url not in _running:
        org = await new_org(live, http)
        data = await org.admin.gql(INTROSPECTION)
        schema = data["__schema"]
        types = {t["name"]: t for t in schema["types"]}
        _running[live.base_url] = {
            root: {f["name"]: f for f in types[schema[key]["name"]]["fields"] or []}
            for root, key in (("Query", "queryType"), ("Mutation", "mutationType"))
        }
    return _running[live.base_url]


def test_the_list_holds_the_specification_tables() -> None:
    names = {op["name"] for op in OPERATIONS}
    assert len([op for op in OPERATIONS if op["root"] == "Query"]) == 32
    assert {"addTimeRecord", "cloneTimeRecords", "editCustomSSO", "unarchivePersons"} <= names
    by_name = {op["name"]: op for op in OPERATIONS}
    assert by_name["countTimeRecords"]["arguments"] == by_name["getTimeRecords"]["arguments"]
    assert by_name["submitTimesheet"]["arguments"] == ["personId", "startTime", "endTime"]
    assert by_name["currentPerson"]["arguments"] == []
    assert "replaceExisting" in by_name["cloneTimeRecords"]["arguments"]


@pytest.mark.skipif(
    not (SPEC.exists() and REFERENCE.exists()),
    reason=f"the specification is not beside the checkout ({SPEC.parent.parent} is absent)",
)
def test_the_lists_are_true_to_the_specification_and_the_reference() -> None:
    stale = "is stale: run scripts/export_spec_operations.py"
    assert read_operations() == OPERATIONS, f"tests/service/spec_operations.json {stale}"
    names = {op["name"] for op in OPERATIONS}
    assert read_implemented(names) == IMPLEMENTED, f"implemented_operations.json {stale}"


@pytest.mark.parametrize("operation", OPERATIONS, ids=_id)
async def test_operation_matches_the_reference(
    operation: dict[str, Any], running_schema: dict[str, dict[str, Any]]
) -> None:
    label = f"{_id(operation)} ({operation['table']})"
    field = running_schema[operation["root"]].get(operation["name"])
    assert field is not None, f"{label} is missing from the running schema"
    arguments = {arg["name"]: _type_string(arg["type"]) for arg in field["args"]}
    missing = [name for name in operation["arguments"] if name not in arguments]
    assert not missing, f"{label} lacks the specification's arguments {missing}"

    reference = operation["reference"]
    if reference is None:
        # The specification is the authority: an operation the reference schema lacks
        # (getAbsenceConsumed) is checked against the specification's argument names only.
        assert set(arguments) == set(operation["arguments"]), f"{label}: extra arguments"
        return
    assert arguments == reference["arguments"], f"{label}: arguments differ from the reference"
    assert _type_string(field["type"]) == reference["returns"], f"{label}: return type differs"


@pytest.mark.parametrize("operation", IMPLEMENTED, ids=_id)
async def test_implemented_operation_matches_the_reference(
    operation: dict[str, Any], running_schema: dict[str, dict[str, Any]]
) -> None:
    field = running_schema[operation["root"]].get(operation["name"])
    assert field is not None, f"{_id(operation)} is missing from the running schema"
    arguments = {arg["name"]: _type_string(arg["type"]) for arg in field["args"]}
    assert arguments == operation["arguments"], f"{_id(operation)}: arguments differ"
    assert _type_string(field["type"]) == operation["returns"], f"{_id(operation)}: return type"
