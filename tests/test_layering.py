"""Every import runs downwards, and no import cycle exists anywhere:

    shell/                the composition root: CLI, ASGI app, assembly; imports anything
    bot/  mail/  web/     the fronts: never each other, never the service
    timebot/              what the fronts share: client, directory, state, tokens, notify, ...
    service/              the embedded time tracking service, reached over HTTP
    plumbing/             engine and unit of work, clock, ids: below the service and timebot

Inside bot/, the chat adapters (bot/slack/, bot/teams/) build on the neutral core (bot/chat/)
and never import each other; the core imports neither.

The graph holds every import: at module level, in functions, under `if TYPE_CHECKING:`,
relative ones, and `from package import module` as an edge to that module. Inside timebot/,
the sub-packages (and the root modules) import each other without a circle either."""

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


def domains() -> tuple[str, ...]:
    registry = ast.parse((ROOT / "service" / "domains.py").read_text(encoding="utf-8"))
    return next(ast.literal_eval(node.value) for node in registry.body
                if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "DOMAINS")


def is_table_module(module: str) -> bool:
    leaf = module.rpartition(".")[2]
    return leaf == "models" or leaf.endswith("_models")


def deep_domain_imports(edges: dict[str, set[str]]) -> list[str]:
    """Imports from one domain of service.domains into a module of another (not its package).
    Tables alone name the tables of other domains they refer to; all other code reaches another
    domain's tables through the table registry, service.models."""
    known = domains()
    return sorted(
        f"{source} -> {target}"
        for source, targets in edges.items()
        if (mine := service_package(source)) in known
        for target in targets
        if (theirs := service_package(target)) in known and theirs != mine
        and target != f"service.{theirs}"
        and not (is_table_module(source) and is_table_module(target))
    )


def domain_graph(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """domain -> the other domains its modules import."""
    known = domains()
    found: dict[str, set[str]] = {domain: set() for domain in known}
    for source, targets in edges.items():
        if (mine := service_package(source)) in known:
            found[mine].update(theirs for target in targets
                               if (theirs := service_package(target)) in known and theirs != mine)
    return found


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


def units_of(edges: dict[str, set[str]], package: str) -> dict[str, set[str]]:
    """The units of one top package (each sub-package whole, each root module on its own) ->
    the other units of it that they import."""

    def unit(module: str) -> str:
        return ".".join(module.split(".")[:2])

    units: dict[str, set[str]] = {}
    for source, targets in edges.items():
        if top(source) == package:
            units.setdefault(unit(source), set()).update(
                unit(target) for target in targets
                if top(target) == package and unit(target) != unit(source))
    return units


def test_no_import_cycle() -> None:
    groups = [sorted(group) for group in tangles(graph())]
    assert groups == [], "import cycles among these modules"


def test_timebots_units_import_each_other_without_cycle() -> None:
    """Without a module cycle, sub-packages can still import each other in a circle (state ->
    notify -> runtime -> state): then whatever imports one of them can reach them all."""
    units = units_of(graph(), "timebot")
    assert {"timebot.state", "timebot.notify", "timebot.directory"} <= set(units)
    assert [sorted(group) for group in tangles(units)] == [], "timebot's units import in a circle"


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


def test_domains_reach_each_other_only_through_their_face() -> None:
    edges = graph()
    faces = {f"service.{domain}" for domain in domains()}
    assert sum(len(targets & faces) for targets in edges.values()) > 100, (
        "imports of the domains' faces are no longer seen"
    )
    assert deep_domain_imports(edges) == [], "import what another domain offers from its package"


def test_the_domains_import_each_other_without_a_cycle() -> None:
    assert tangles(domain_graph(graph())) == []


def face_names(domain: str) -> tuple[set[str], dict[str, str]]:
    """A face's `__all__` and its `if TYPE_CHECKING:` imports (name -> module)."""
    tree = ast.parse((ROOT / "service" / domain / "__init__.py").read_text(encoding="utf-8"))
    offered: set[str] = set()
    imported: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__":
            offered = set(ast.literal_eval(node.value))
        elif isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            imported.update((alias.asname or alias.name, statement.module or "")
                            for statement in node.body if isinstance(statement, ast.ImportFrom)
                            for alias in statement.names)
    return offered, imported


def test_each_face_offers_what_the_other_domains_import_from_it() -> None:
    """A face (service/face.py) loads on demand what its `if TYPE_CHECKING:` block imports from
    the domain's own modules and lists in `__all__`; nothing else, no name of a module of the
    package. Its `__getattr__` would answer any name, so the names other domains import from it
    are checked here: each is one the face offers."""
    faces = {domain: face_names(domain) for domain in domains()}
    modules = {domain: {path.stem for path in (ROOT / "service" / domain).glob("*.py")}
               for domain in faces}
    for domain, (offered, imported) in faces.items():
        assert offered == set(imported), f"service.{domain}: __all__ is what it imports"
        assert all(module.startswith(f"service.{domain}.") for module in imported.values())
        assert not offered & modules[domain], f"service.{domain} offers a module's name"
    unknown = []
    for path in sorted((ROOT / "service").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                package = node.module.removeprefix("service.")
                if package in faces:
                    unknown += [f"{path.relative_to(ROOT)}: {node.module}.{alias.name}"
                                for alias in node.names if alias.name not in faces[package][0]
                                and alias.name not in modules[package]]
    assert unknown == []


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


def package_cycles(edges: dict[str, set[str]], package: str) -> list[set[str]]:
    """The import cycles among the children of `package` (its sub-packages and root modules): a
    module counts as the child it lies in (`mail.inbound.process` as `mail.inbound`, a root
    module `mail.errors` as itself), and an import between two children is an edge. Modules
    without a cycle may still form one here: the rooms of a package must import one way."""
    prefix = f"{package}."

    def child(module: str) -> str | None:
        if not module.startswith(prefix):
            return None
        return prefix + module[len(prefix):].split(".")[0]

    children: dict[str, set[str]] = {}
    for source, targets in edges.items():
        if (mine := child(source)) is not None:
            children.setdefault(mine, set()).update(
                theirs for target in targets if (theirs := child(target)) not in (None, mine)
            )
    return tangles(children)


def test_the_rooms_of_mail_import_each_other_one_way() -> None:
    edges = graph()
    rooms = {f"mail.{room}" for room in ("inbound", "reading", "replies", "outbound", "queues")}
    assert rooms <= set(edges), "mail's sub-packages are no longer found"
    assert [sorted(group) for group in package_cycles(edges, "mail")] == [], (
        "mail's sub-packages import each other in a cycle (HACKING.md says who may use whom)"
    )


def test_package_cycles_see_a_cycle_that_no_two_modules_make() -> None:
    edges = {
        "mail.a.x": {"mail.b.y"},
        "mail.b.y": set(),
        "mail.b.z": {"mail.a.w"},
        "mail.a.w": {"mail.errors"},
        "mail.errors": set(),
        "mail.composer": {"mail.a.x", "mail.b.z"},
        "timebot.client": {"mail.a.x"},
    }
    assert tangles(edges) == []
    assert package_cycles(edges, "mail") == [{"mail.a", "mail.b"}]
    del edges["mail.b.z"]
    assert package_cycles(edges, "mail") == []


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


def test_a_circle_of_packages_is_seen_without_a_module_cycle(tmp_path: Path) -> None:
    write_package(
        tmp_path,
        {
            "timebot/__init__.py": "",
            "timebot/errors.py": "",
            "timebot/state/__init__.py": "",
            "timebot/state/away.py": "from timebot.notify.periods import local_date\n",
            "timebot/state/models.py": "from timebot import errors\n",
            "timebot/notify/__init__.py": "",
            "timebot/notify/periods.py": "",
            "timebot/notify/reviews.py": "from timebot.state.models import Row\n",
        },
    )
    edges = graph(tmp_path, ("timebot",))
    assert tangles(edges) == []
    units = units_of(edges, "timebot")
    assert units["timebot.state"] == {"timebot.notify", "timebot.errors"}
    assert tangles(units) == [{"timebot.state", "timebot.notify"}]


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
    print("cycles among the domains:", tangles(domain_graph(graph())))
