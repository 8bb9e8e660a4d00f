"""Runs every benchmark module with a figure whose name starts with the given prefix."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path
from types import ModuleType

from bench.busy import mode
from bench.common import note

SKIP = {"common", "__main__"}


def modules() -> list[ModuleType]:
    found = []
    for info in sorted(pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda m: m.name):
        if info.name in SKIP or info.name.startswith("_"):
            continue
        found.append(importlib.import_module(f"bench.{info.name}"))
    return found


def main(argv: list[str]) -> int:
    prefix = argv[0] if argv else ""
    note(f"# {mode()}")
    ran = 0
    for module in modules():
        names = [name for name in getattr(module, "FIGURES", ()) if name.startswith(prefix)]
        if not names:
            continue
        note(f"# {module.__name__}: {', '.join(names)}")
        for figure in module.run(set(names)):
            print(figure.line(), flush=True)
            ran += 1
    if not ran:
        note(f"no benchmark figure starts with {prefix!r}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
