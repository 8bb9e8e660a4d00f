"""bot/ and mail/ reach the time tracking service only through the GraphQL client, so that a
hosted service works as well as the embedded one: neither may import the service package."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def imported_modules(source: str) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def test_the_checker_sees_nested_and_aliased_imports() -> None:
    source = "def f():\n    from service.db import x\nimport service.clock as c\nimport httpx\n"
    assert sorted(imported_modules(source)) == ["httpx", "service.clock", "service.db"]


@pytest.mark.parametrize("package", ["bot", "mail"])
def test_front_packages_never_import_the_service(package: str) -> None:
    offenders = [
        f"{path.relative_to(ROOT)}: {module}"
        for path in sorted((ROOT / package).rglob("*.py"))
        for module in imported_modules(path.read_text(encoding="utf-8"))
        if module == "service" or module.startswith("service.")
    ]
    assert offenders == []
