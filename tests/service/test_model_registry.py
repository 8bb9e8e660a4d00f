"""Importing one domain's tables is enough to use them: before the first use of any table,
every table of the service is registered (service/model_base.py), as when every table lived in
one package whose `__init__` imported them all."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = """
import importlib, sys
from sqlalchemy.orm import configure_mappers
importlib.import_module(sys.argv[1])
from service.model_base import Base
before = len(Base.metadata.tables)
configure_mappers()
unresolved = []
for table in Base.metadata.sorted_tables:
    for key in table.foreign_keys:
        try:
            key.column
        except Exception as error:
            unresolved.append(str(error))
print(before, len(Base.metadata.tables), len(unresolved))
"""


def tables_after_importing(module: str) -> tuple[int, int, int]:
    result = subprocess.run([sys.executable, "-c", PROGRAM, module], cwd=ROOT,
                            capture_output=True, text=True, check=True, timeout=120)
    before, after, unresolved = result.stdout.split()
    return int(before), int(after), int(unresolved)


def test_one_domains_tables_bring_every_table_before_first_use() -> None:
    _, everything, _ = tables_after_importing("service.models")
    before, after, unresolved = tables_after_importing("service.budgets.models")
    assert before < everything  # only the budgets' tables and what they import, at first
    assert (after, unresolved) == (everything, 0)
