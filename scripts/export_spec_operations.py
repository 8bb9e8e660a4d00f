"""Writes tests/service/spec_operations.json from ../shared (the specification's tables and
the reference schema), and implemented_operations.json (the running schema's other operations
that the reference has, with its signatures). Run it when the specification or the schema
changes; the suite checks the running schema against both files, and a cross-check test tells
when they are stale."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.service.spec_tables import (
    IMPLEMENTED_FILE,
    OPERATIONS_FILE,
    read_implemented,
    read_operations,
    render,
)

if __name__ == "__main__":
    operations = read_operations()
    OPERATIONS_FILE.write_text(render(operations), encoding="utf-8")
    implemented = read_implemented({op["name"] for op in operations})
    IMPLEMENTED_FILE.write_text(render(implemented), encoding="utf-8")
    print(f"wrote {OPERATIONS_FILE} and {IMPLEMENTED_FILE}")
