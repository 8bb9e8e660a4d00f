"""Every import runs downwards, and no import cycle exists anywhere:

    shell/                the composition root: CLI, ASGI app, assembly; imports anything
    bot/  mail/  web/     the fronts: never each other, never the service
    timebot/              what the fronts share: client, directory, state, tokens, notify, ...
    service/              the embedded time tracking service, reached over HTTP
    plumbing/             engine and unit of work, clock, ids: below the service and timebot

The graph holds every import: at module level, in functions, under `if TYPE_CHECKING:`,
relative ones, and `from package import module` as an edge to that module."""

from __future__ import annotations

import ast
import graphlib
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

# Known exceptions that may only shrink (each entry is removed as it is mended).
KNOWN_UPWARD: set[str] = {
    "timebot.approval_poller -> mail.reviews",
    "timebot.link_rules -> mail.reviews",
    "timebot.links -> mail.errors",
    "timebot.links -> mail.reminders",
    "timebot.links -> mail.reviews",
    "timebot.outbox_page -> mail.reviews",
    "timebot.reconcile -> mail.reviews",
    "timebot.runtime -> mail.inbox",
    "timebot.runtime -> mail.outbound",
    "timebot.scheduler -> mail.digest",
    "timebot.scheduler -> mail.reminders",
    "timebot.scheduler -> mail.reviews",
    "timebot.tokens -> mail.errors",
    "timebot.web -> service.embedded",
    "timebot.web.account -> mail.reviews",
    "timebot.web.account -> service.errors",
    "timebot.web.account -> service.models",
    "timebot.web.account -> service.provisioning",
    "timebot.web.account -> service.resolvers.organisation",
    "timebot.web.account -> service.signin.sessions",
    "timebot.web.account_data -> mail.reviews",
    "timebot.web.account_data -> service.legacy.tokens",
    "timebot.web.account_data -> service.models",
    "timebot.web.account_data -> service.models.signin",
    "timebot.web.account_data -> service.provisioning",
    "timebot.web.account_data -> service.signin.passkeys",
    "timebot.web.account_data -> service.signin.sessions",
    "timebot.web.account_data -> service.signin.sso",
    "timebot.web.common -> service.embedded",
    "timebot.web.common -> service.errors",
    "timebot.web.common -> service.graphql.execution",
    "timebot.web.common -> service.signin.sessions",
    "timebot.web.common -> service.signin.web",
    "timebot.web.oidc_flow -> service.signin.web",
    "timebot.web.passkeys -> service.errors",
    "timebot.web.passkeys -> service.models",
    "timebot.web.passkeys -> service.signin.passkeys",
    "timebot.web.passkeys -> service.signin.sessions",
    "timebot.web.passkeys -> service.signin.web",
    "timebot.web.public_sso -> service.models",
    "timebot.web.public_sso -> service.signin.public_idp",
    "timebot.web.signin -> service.signin.web",
    "timebot.web.sso -> service.errors",
    "timebot.web.sso -> service.models",
    "timebot.web.sso -> service.signin.sessions",
    "timebot.web.sso -> service.signin.sso",
    "timebot.web.sso -> service.signin.web",
    "timebot.webhook_consumer -> service.webhooks.local",
}
KNOWN_LONG: dict[str, int] = {
    "service/approvals/workflow.py": 1058,
    "service/resolvers/approvals.py": 681,
    "service/demo.py": 628,
    "service/legacy/services.py": 627,
    "mail/process.py": 616,
    "bot/nudges.py": 571,
    "service/resolvers/expenses.py": 531,
    "service/resolvers/tags.py": 480,
    "bot/approvals.py": 452,
    "mail/reading.py": 445,
    "service/resolvers/time_off.py": 430,
    "service/graphql/fastpath.py": 423,
    "mail/receipts.py": 414,
}
KNOWN_TANGLES: list[set[str]] = [
    {
        "bot.app",
        "bot.approvals",
        "bot.component",
        "bot.home",
        "bot.nudges",
        "bot.owner_notices",
        "bot.socket_mode",
        "bot.threads",
        "bot.time_commands",
    },
    {"mail.errors", "timebot.tokens"},
    {"mail.process", "mail.time_entry"},
]


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


def upward_imports(edges: dict[str, set[str]]) -> set[str]:
    return {
        f"{source} -> {target}"
        for source, targets in edges.items()
        for target in targets
        if top(target) not in MAY_IMPORT[top(source)]
    }


def cycle_in(edges: dict[str, set[str]]) -> list[str] | None:
    try:
        tuple(graphlib.TopologicalSorter(edges).static_order())
    except graphlib.CycleError as error:
        return list(reversed(error.args[1]))
    return None


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
    new = [group for group in groups if set(group) not in KNOWN_TANGLES]
    assert new == [], "import cycles among these modules"
    assert [sorted(t) for t in KNOWN_TANGLES if sorted(t) not in groups] == [], (
        "mended: remove these from KNOWN_TANGLES"
    )
    if not KNOWN_TANGLES:
        cycle = cycle_in(graph())
        assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_every_import_runs_downwards() -> None:
    wrong = upward_imports(graph())
    assert sorted(wrong - KNOWN_UPWARD) == []
    assert sorted(KNOWN_UPWARD - wrong) == [], "mended: remove these from KNOWN_UPWARD"


def test_no_module_is_long() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path, _ in modules_of(ROOT).values()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    grown = {name: lines for name, lines in long.items() if lines > KNOWN_LONG.get(name, MAX_LINES)}
    assert grown == {}, f"over {MAX_LINES} lines (split by concept)"
    assert sorted(set(KNOWN_LONG) - set(long)) == [], "mended: remove these from KNOWN_LONG"


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
    assert cycle_in(edges) is not None
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
    assert cycle_in(edges) is None
    assert tangles(edges) == []


if __name__ == "__main__":  # the closing note's table: python tests/test_layering.py
    for (source, target), count in sorted(layer_pairs(graph()).items()):
        print(f"{source} -> {target}: {count}")
    print("upward:", len(upward_imports(graph())), "cycle:", cycle_in(graph()))
