"""Writes tests/service/spec_operations.json from ../shared (the specification's tables and
the reference schema). Run it when the specification changes; the suite then checks the
running schema against the file, and a cross-check test tells when the file is stale."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.service.spec_tables import OPERATIONS_FILE, read_operations, render  # noqa: E402

if __name__ == "__main__":
    OPERATIONS_FILE.write_text(render(read_operations()), encoding="utf-8")
    print(f"wrote {OPERATIONS_FILE}")
