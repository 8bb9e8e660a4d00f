"""Reading deploy/Dockerfile and .dockerignore the way the builders do (no tests here): stages
with their instructions (line continuations joined, ARG defaults substituted into FROM), and
.dockerignore's patterns applied to a path (Docker's rules: `*` within a segment, `**` across
segments, a pattern excludes a directory's whole content, later `!` patterns re-include)."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [args for key, args in self.instructions if key == keyword]


def instructions(text: str) -> list[tuple[str, str]]:
    joined = re.sub(r"\\\n", " ", text)
    found = []
    for line in joined.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        keyword, _, args = stripped.partition(" ")
        found.append((keyword.upper(), args.strip()))
    return found


def stages(text: str) -> tuple[dict[str, str], list[Stage]]:
    """The global ARG defaults and the stages, FROM's ${ARG} resolved."""
    args: dict[str, str] = {}
    result: list[Stage] = []
    for keyword, value in instructions(text):
        if keyword == "ARG" and not result:
            arg, _, default = value.partition("=")
            args[arg] = default
        elif keyword == "FROM":
            parts = value.split()
            base = re.sub(r"\$\{(\w+)\}|\$(\w+)",
                          lambda m: args.get(m.group(1) or m.group(2), ""), parts[0])
            alias = parts[2] if len(parts) == 3 and parts[1].upper() == "AS" else None
            result.append(Stage(base, alias))
        elif result:
            result[-1].instructions.append((keyword, value))
    return args, result


def exec_form(args: str) -> list[str]:
    """A JSON-array instruction argument (CMD, HEALTHCHECK CMD) as its argv."""
    import json

    return [str(part) for part in json.loads(args)] if args.startswith("[") else shlex.split(args)


def _segment_regex(pattern: str) -> str:
    out = []
    index = 0
    while index < len(pattern):
        if pattern.startswith("**", index):
            out.append(".*")
            index += 2
            if pattern.startswith("/", index):
                out[-1] = "(?:.*/)?"
                index += 1
        elif pattern[index] == "*":
            out.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            out.append("[^/]")
            index += 1
        else:
            out.append(re.escape(pattern[index]))
            index += 1
    return "".join(out)


def ignore_patterns(text: str) -> list[tuple[bool, re.Pattern[str]]]:
    patterns = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        body = line[1:] if negate else line
        body = body.strip("/")
        patterns.append((negate, re.compile(_segment_regex(body) + "(?:/.*)?")))
    return patterns


def ignored(path: str, text: str) -> bool:
    """Whether `path` (relative to the build context) is left out of the context."""
    result = False
    for negate, pattern in ignore_patterns(text):
        if pattern.fullmatch(path):
            result = not negate
    return result
