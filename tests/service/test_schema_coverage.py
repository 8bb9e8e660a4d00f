"""The running schema covers the specification's operations with the reference signatures.

The operations and their argument names come from the Queries and Mutations tables of the
specification (the backticked names of each row's first cell; the backticked names of its
arguments cell, up to a "returns"); their signatures (argument types with nullability, return
type) from the reference schema. The running schema is read by introspection over HTTP.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from graphql import GraphQLField, GraphQLObjectType, build_schema

from tests.support import LiveServer, new_org

SHARED = Path(__file__).resolve().parents[3] / "shared"
SPEC = SHARED / "spec" / "time-tracking-service.md"
REFERENCE = SHARED / "reference" / "svc-schema.graphql"

_BACKTICKED = re.compile(r"`([^`]+)`")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Operation:
    root: str  # "Query" or "Mutation"
    name: str
    arguments: tuple[str, ...]
    table: str

    def __str__(self) -> str:
        return f"{self.root}.{self.name}"


def _section(text: str, start: str, end: str) -> str:
    begin = text.index(start)
    return text[begin : text.index(end, begin)]


def _names(cell: str) -> list[str]:
    """Backticked identifiers of a cell, each once, in order."""
    names = [name for name in _BACKTICKED.findall(cell) if _NAME.match(name)]
    return list(dict.fromkeys(names))


def _rows(section: str) -> list[tuple[str, list[str]]]:
    """(table heading, cells) of every table body row of a section."""
    rows: list[tuple[str, list[str]]] = []
    heading = ""
    for line in section.splitlines():
        bold = re.match(r"^\*\*(.+?)\*\*", line.strip())
        if bold:
            heading = bold.group(1)
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not _names(cells[0]):
            continue  # the header row
        rows.append((heading, cells))
    return rows


def spec_operations() -> list[Operation]:
    text = SPEC.read_text(encoding="utf-8")
    found: dict[str, Operation] = {}
    same_as: dict[str, str] = {}
    for root, start, end in (
        ("Query", "#### Queries", "#### Filters"),
        ("Mutation", "#### Mutations", "## Authentication"),
    ):
        for heading, cells in _rows(_section(text, start, end)):
            arguments_cell = cells[1] if len(cells) > 1 else ""
            reference = re.match(r"^same as `([A-Za-z]+)`", arguments_cell)
            arguments = re.split(r"\breturns\b", arguments_cell, flags=re.IGNORECASE)[0]
            for name in _names(cells[0]):
                if reference:
                    same_as[name] = reference.group(1)
                found[name] = Operation(root, name, tuple(_names(arguments)), heading or "Queries")
    for name, other in same_as.items():
        found[name] = Operation(found[name].root, name, found[other].arguments, found[name].table)
    return list(found.values())


OPERATIONS = spec_operations()


def _type_string(type_ref: dict[str, Any]) -> str:
    kind = type_ref["kind"]
    if kind == "NON_NULL":
        return _type_string(type_ref["ofType"]) + "!"
    if kind == "LIST":
        return "[" + _type_string(type_ref["ofType"]) + "]"
    return str(type_ref["name"])


def _reference_signature(field: GraphQLField) -> tuple[dict[str, str], str]:
    return ({name: str(arg.type) for name, arg in field.args.items()}, str(field.type))


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


_reference = build_schema(REFERENCE.read_text(encoding="utf-8"))


def test_the_specification_tables_were_read() -> None:
    names = {op.name for op in OPERATIONS}
    assert len([op for op in OPERATIONS if op.root == "Query"]) == 32
    assert {"addTimeRecord", "cloneTimeRecords", "editCustomSSO", "unarchivePersons"} <= names
    by_name = {op.name: op for op in OPERATIONS}
    assert by_name["countTimeRecords"].arguments == by_name["getTimeRecords"].arguments
    assert by_name["submitTimesheet"].arguments == ("personId", "startTime", "endTime")
    assert by_name["currentPerson"].arguments == ()
    assert "replaceExisting" in by_name["cloneTimeRecords"].arguments


@pytest.mark.parametrize("operation", OPERATIONS, ids=str)
async def test_operation_matches_the_reference(
    operation: Operation, running_schema: dict[str, dict[str, Any]]
) -> None:
    field = running_schema[operation.root].get(operation.name)
    assert field is not None, f"{operation} ({operation.table}) is missing from the running schema"
    arguments = {arg["name"]: _type_string(arg["type"]) for arg in field["args"]}
    missing = [name for name in operation.arguments if name not in arguments]
    assert not missing, f"{operation} lacks the specification's arguments {missing}"

    root = _reference.query_type if operation.root == "Query" else _reference.mutation_type
    assert isinstance(root, GraphQLObjectType)
    if operation.name not in root.fields:
        # The specification is the authority: an operation the reference schema lacks
        # (getAbsenceConsumed) is checked against the specification's argument names only.
        assert set(arguments) == set(operation.arguments), f"{operation}: extra arguments"
        return
    expected_args, expected_type = _reference_signature(root.fields[operation.name])
    assert arguments == expected_args, f"{operation}: arguments differ from the reference"
    assert _type_string(field["type"]) == expected_type, f"{operation}: return type differs"
