"""Every import runs downwards, and no import cycle exists anywhere:

    shell/                the composition root: CLI, ASGI app, assembly; imports anything
    bot/  mail/  web/     the fronts: never each other, never the service
    timebot/              what the fronts share: client, directory, state, tokens, notify, ...
    service/              the embedded time tracking service, reached over HTTP
    plumbing/             engine and unit of work, clock, ids: below the service and timebot

Inside bot/, the chat adapters (bot/slack/, bot/teams/) build on the neutral core (bot/chat/)
and never import each other; the core imports neither.

The graph holds every import: at module level, in functions, under `if TYPE_CHECKING:`,
relative ones, and `from package import module` as an edge to that module."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("shell", "bot", "mail", "web", "timebot", "service", "plumbing")
MAY_IMPORT: dict[str, set[str]] = {
    "shell": set(PACKAGES),
    "bot": {"bot", "timebot", "plumbing"},
    "mail": {"mail", "timebot", "plumbing"},
    "web": {"web", "timebot", "plumbing"},
    "timebot": {"timebot", "plumbing"},
    "service": {"service", "plumbing"},
    "plumbing": {"plumbing"},
}
MAX_LINES = 400
# Imports from one service domain into another domain's module rather than its package (its
# `__init__`, the public face). Issue 41 wants none; until each domain has its face, the count
# may only go down.
DEEP_DOMAIN_IMPORTS = 201


def modules_of(root: Path, packages: tuple[str, ...] = PACKAGES) -> dict[str, tuple[Path, bool]]:
    """module name -> (file, is a package's __init__), for every .py under `packages`."""
    found: dict[str, tuple[Path, bool]] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            if "migrations" in path.relative_to(root).parts[:-1] and path.parent.name == "versions":
                continue
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            found[".".join(parts)] = (path, is_package)
    return found


def graph(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, set[str]]:
    """module -> the project modules it imports (any depth, any kind of import)."""
    modules = modules_of(root, packages)

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    edges: dict[str, set[str]] = {}
    for module, (path, is_package) in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(t for alias in node.names if (t := known(alias.name)))
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = module.split(".") if is_package else module.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    source = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    source = node.module or ""
                for alias in node.names:
                    submodule = f"{source}.{alias.name}"
                    target = submodule if submodule in modules else known(source)
                    if target:
                        targets.add(target)
        targets.discard(module)
        edges[module] = targets
    return edges


def top(module: str) -> str:
    return module.split(".")[0]


def is_resolver(module: str) -> bool:
    """Resolver modules (`service/<package>/*_resolvers.py`) are leaves: what two of them share
    lives in a module that is not a resolver."""
    leaf = module.rpartition(".")[2]
    return top(module) == "service" and (leaf == "resolvers" or leaf.endswith("_resolvers"))


def service_package(module: str) -> str | None:
    """The package of service/ a module belongs to ("" for the root's own modules)."""
    parts = module.split(".")
    if parts[0] != "service":
        return None
    if len(parts) == 1 or (len(parts) == 2 and not (ROOT / "service" / parts[1]).is_dir()):
        return ""
    return parts[1]


def deep_domain_imports(edges: dict[str, set[str]]) -> list[str]:
    """Imports from one domain of service.domains into a module of another (not its package)."""
    registry = ast.parse((ROOT / "service" / "domains.py").read_text(encoding="utf-8"))
    domains = next(ast.literal_eval(node.value) for node in registry.body
                   if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "DOMAINS")
    return sorted(
        f"{source} -> {target}"
        for source, targets in edges.items()
        if (mine := service_package(source)) in domains
        for target in targets
        if (theirs := service_package(target)) in domains and theirs != mine
        and target != f"service.{theirs}"
    )


def upward_imports(edges: dict[str, set[str]]) -> set[str]:
    return {
        f"{source} -> {target}"
        for source, targets in edges.items()
        for target in targets
        if top(target) not in MAY_IMPORT[top(source)]
    }


def tangles(edges: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected groups of more than one module: each holds at least one cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in edges.get(module, ()):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(group)

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return found


def layer_pairs(edges: dict[str, set[str]]) -> Counter[tuple[str, str]]:
    """Imports between different top packages, counted per pair (the closing note's table)."""
    return Counter(
        (top(source), top(target))
        for source, targets in edges.items()
        for target in targets
        if top(source) != top(target)
    )


def test_no_import_cycle() -> None:
    groups = [sorted(group) for group in tangles(graph())]
    assert groups == [], "import cycles among these modules"


def test_every_import_runs_downwards() -> None:
    assert sorted(upward_imports(graph())) == []


def test_resolvers_import_no_other_resolver() -> None:
    edges = graph()
    assert sum(map(is_resolver, edges)) > 50, "the resolver modules are no longer found"
    crossing = sorted(
        f"{source} -> {target}"
        for source, targets in edges.items()
        if is_resolver(source)
        for target in targets
        if is_resolver(target)
    )
    assert crossing == []


def test_domains_reach_each_other_less_past_their_face() -> None:
    deep = deep_domain_imports(graph())
    assert deep, "no import between domains found: the check no longer sees them"
    assert len(deep) <= DEEP_DOMAIN_IMPORTS, (
        f"{len(deep)} imports reach into another domain past its __init__ (at most "
        f"{DEEP_DOMAIN_IMPORTS}): import what another domain offers from its package"
    )


CHAT_ADAPTERS = ("slack", "teams")  # bot/<adapter>/: each a platform's adapter of bot/'s core


def adapter_crossings(edges: dict[str, set[str]],
                      adapters: tuple[str, ...] = CHAT_ADAPTERS) -> list[str]:
    """Imports from one chat adapter into another, or from bot/'s neutral core into any: the
    adapters build on the core, never on each other."""

    def adapter(module: str) -> str | None:
        parts = module.split(".")
        return parts[1] if len(parts) > 1 and parts[0] == "bot" and parts[1] in adapters \
            else None

    return sorted(
        f"{source} -> {target}"
        for source, targets in edges.items() if top(source) == "bot"
        for target in targets
        if (theirs := adapter(target)) is not None and adapter(source) != theirs
    )


def test_chat_adapters_never_import_each_other() -> None:
    edges = graph()
    assert any(module.startswith("bot.slack.") for module in edges), "bot/slack/ is not found"
    assert adapter_crossings(edges) == []


def test_adapter_crossings_are_seen(tmp_path: Path) -> None:
    write_package(tmp_path, {
        "bot/__init__.py": "",
        "bot/chat/__init__.py": "",
        "bot/chat/core.py": "from bot.slack import render\n",
        "bot/slack/__init__.py": "",
        "bot/slack/render.py": "from bot.chat import core\nfrom bot.slack import app\n",
        "bot/slack/app.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from bot.teams.cards import card\n",
        "bot/teams/__init__.py": "",
        "bot/teams/cards.py": "def f():\n    from ..slack.render import x\n",
    })
    assert adapter_crossings(graph(tmp_path, ("bot",))) == [
        "bot.chat.core -> bot.slack.render", "bot.slack.app -> bot.teams.cards",
        "bot.teams.cards -> bot.slack.render"]


def test_no_module_is_long() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path, _ in modules_of(ROOT).values()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}, f"over {MAX_LINES} lines: split by concept"


def test_the_fronts_and_their_ground_import_without_the_service() -> None:
    """Against a hosted service the fronts run without the embedded service's code: every
    module of bot/, mail/, web/ and timebot/ imports with `service` made unimportable."""
    fronts = sorted(
        module for module in modules_of(ROOT, ("bot", "mail", "web", "timebot", "plumbing"))
        if ".migrations" not in module
    )
    program = (
        "import importlib, sys\n"
        "sys.modules['service'] = None\n"
        f"for name in {fronts!r}:\n"
        "    importlib.import_module(name)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]


def write_package(root: Path, files: dict[str, str]) -> None:
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")


def test_the_graph_sees_typing_only_relative_and_nested_imports(tmp_path: Path) -> None:
    write_package(
        tmp_path,
        {
            "bot/__init__.py": "",
            "bot/app.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from bot.home import Home\n",
            "bot/home.py": "def f():\n    from . import app\n",
            "bot/parts/__init__.py": "from .. import home\nfrom ..app import x\n",
            "timebot/__init__.py": "",
            "timebot/tokens.py": "import bot.home as h\n",
        },
    )
    edges = graph(tmp_path, ("bot", "timebot"))
    assert edges["bot.app"] == {"bot.home"}
    assert edges["bot.home"] == {"bot.app"}
    assert edges["bot.parts"] == {"bot.home", "bot.app"}
    assert tangles(edges) == [{"bot.app", "bot.home"}]
    assert upward_imports(edges) == {"timebot.tokens -> bot.home"}


def test_a_graph_without_cycles_passes(tmp_path: Path) -> None:
    write_package(
        tmp_path,
        {
            "mail/__init__.py": "",
            "mail/a.py": "from mail import b\n",
            "mail/b.py": "import json\n",
        },
    )
    edges = graph(tmp_path, ("mail",))
    assert edges["mail.a"] == {"mail.b"}
    assert tangles(edges) == []


if __name__ == "__main__":  # the closing note's table: python tests/test_layering.py
    for (source, target), count in sorted(layer_pairs(graph()).items()):
        print(f"{source} -> {target}: {count}")
    print("upward:", len(upward_imports(graph())), "cycles:", tangles(graph()))
    uses: dict[str, set[str]] = {}
    for source, targets in graph().items():
        if (mine := service_package(source)) is not None:
            uses.setdefault(mine or "(root)", set()).update(
                theirs for target in targets
                if (theirs := service_package(target)) and theirs != mine)
    for package, used in sorted(uses.items()):
        print(f"service {package}: {', '.join(sorted(used))}")
    print("imports into another domain past its __init__:", len(deep_domain_imports(graph())))
