"""Reads the specification's Queries and Mutations tables and the reference schema.

Only the cross-check test and `scripts/export_spec_operations.py` use this: they need
`../shared/` beside the checkout. The suite itself checks the running schema against the
project's own list, `tests/service/spec_operations.json`, which this module writes.

The operations and their argument names come from the backticked names of each row's first
cell and of its arguments cell, up to a "returns"; their signatures (argument types with
nullability, return type) from the reference schema.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from graphql import GraphQLObjectType, build_schema

SHARED = Path(__file__).resolve().parents[3] / "shared"
SPEC = SHARED / "spec" / "time-tracking-service.md"
REFERENCE = SHARED / "reference" / "svc-schema.graphql"
OPERATIONS_FILE = Path(__file__).with_name("spec_operations.json")
# Every other operation the running schema shares with the reference (the ones the issues
# named: approvals, rates, time off, ...), with the reference's signature.
IMPLEMENTED_FILE = Path(__file__).with_name("implemented_operations.json")

_BACKTICKED = re.compile(r"`([^`]+)`")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


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


def read_operations(spec: Path = SPEC, reference: Path = REFERENCE) -> list[dict[str, Any]]:
    """Every operation of the specification's tables, with its reference signature when the
    reference schema has it (`reference: null` otherwise: the specification is the authority)."""
    text = spec.read_text(encoding="utf-8")
    found: dict[str, dict[str, Any]] = {}
    same_as: dict[str, str] = {}
    for root, start, end in (
        ("Query", "#### Queries", "#### Filters"),
        ("Mutation", "#### Mutations", "## Authentication"),
    ):
        for heading, cells in _rows(_section(text, start, end)):
            arguments_cell = cells[1] if len(cells) > 1 else ""
            same = re.match(r"^same as `([A-Za-z]+)`", arguments_cell)
            arguments = re.split(r"\breturns\b", arguments_cell, flags=re.IGNORECASE)[0]
            for name in _names(cells[0]):
                if same:
                    same_as[name] = same.group(1)
                found[name] = {
                    "root": root,
                    "name": name,
                    "table": heading or "Queries",
                    "arguments": _names(arguments),
                }
    for name, other in same_as.items():
        found[name]["arguments"] = list(found[other]["arguments"])

    schema = build_schema(reference.read_text(encoding="utf-8"))
    for operation in found.values():
        root_type = schema.query_type if operation["root"] == "Query" else schema.mutation_type
        assert isinstance(root_type, GraphQLObjectType)
        field = root_type.fields.get(operation["name"])
        operation["reference"] = (
            None
            if field is None
            else {
                "arguments": {arg: str(value.type) for arg, value in field.args.items()},
                "returns": str(field.type),
            }
        )
    return list(found.values())


def render(operations: list[dict[str, Any]]) -> str:
    """The data file's text: one operation a line, so a diff shows what changed."""
    lines = ",\n".join("  " + json.dumps(op, ensure_ascii=False) for op in operations)
    return "[\n" + lines + "\n]\n"


def load_operations() -> list[dict[str, Any]]:
    operations: list[dict[str, Any]] = json.loads(OPERATIONS_FILE.read_text(encoding="utf-8"))
    return operations


def signature(field: Any) -> dict[str, Any]:
    return {
        "arguments": {arg: str(value.type) for arg, value in field.args.items()},
        "returns": str(field.type),
    }


def read_implemented(spec_names: set[str], reference: Path = REFERENCE) -> list[dict[str, Any]]:
    """Each operation of the running schema (built in process) that the reference schema also
    has and the specification's tables do not list, with the reference's signature."""
    from service.graphql.schema import build_schema as build_running

    running = build_running()
    schema = build_schema(reference.read_text(encoding="utf-8"))
    found: list[dict[str, Any]] = []
    for root, ours, theirs in (
        ("Query", running.query_type, schema.query_type),
        ("Mutation", running.mutation_type, schema.mutation_type),
    ):
        assert ours is not None and theirs is not None
        for name in sorted(ours.fields):
            if name in spec_names or name not in theirs.fields:
                continue
            found.append({"root": root, "name": name, **signature(theirs.fields[name])})
    return found


def load_implemented() -> list[dict[str, Any]]:
    operations: list[dict[str, Any]] = json.loads(IMPLEMENTED_FILE.read_text(encoding="utf-8"))
    return operations
