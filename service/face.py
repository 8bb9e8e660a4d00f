"""A domain's public face: its package `__init__` names what other domains may use, as
imports under `if TYPE_CHECKING:` and in `__all__`, and ends with

    def __getattr__(name: str) -> object:
        return face_attribute(__name__, name)

which loads the module a name comes from when another module first asks for it. Loading on
demand is what lets the table registry (service.models) import a domain's tables: importing
`service.<domain>.models` runs the domain's `__init__` first, before the registry has the tables
that the modules behind the face import from it. A name the face offers is never the name of
one of the package's modules (once loaded, a module is the package's attribute of that name)."""

from __future__ import annotations

import ast
import importlib
import sys
from functools import cache
from pathlib import Path


@cache
def _sources(package: str) -> dict[str, tuple[str, str]]:
    """name -> (the module it is imported from, its name there), by the package's
    `if TYPE_CHECKING:` block."""
    init = sys.modules[package].__file__
    assert init is not None
    tree = ast.parse(Path(init).read_text(encoding="utf-8"))
    return {
        alias.asname or alias.name: (node.module, alias.name)
        for block in tree.body
        if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING"
        for node in block.body
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }


def face_attribute(package: str, name: str) -> object:
    """The value `package` offers as `name`, kept on the package once loaded."""
    source = _sources(package).get(name)
    if source is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    module, original = source
    value = getattr(importlib.import_module(module), original)
    setattr(sys.modules[package], name, value)
    return value
