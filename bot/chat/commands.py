"""The command table: `/time …` and `/timesheet …` (Slack's slash commands, a Teams bot's
commands), each sub-command a handler of the adapter's own type `H`.

`lookup(command, text)` finds the sub-command by the first word of the text (case-insensitive;
a fallback takes text whose first word is none, e.g. `/time 2h @acme fixing`), `help_text`
lists them. The adapter keeps one table, adds the neutral sub-commands
(bot.chat.quick_entry.add_commands) and its own (link, remind, nudges) to it, and answers
with `help_text` when the text names none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

H = TypeVar("H")


@dataclass(frozen=True)
class Command(Generic[H]):
    handler: H
    help: str


@dataclass
class CommandTable(Generic[H]):
    """Sub-commands per command; a fallback takes text whose first word is no sub-command."""

    commands: dict[str, dict[str, Command[H]]] = field(
        default_factory=lambda: {"/time": {}, "/timesheet": {}}
    )
    fallbacks: dict[str, H] = field(default_factory=dict)

    def add(self, command: str, subcommand: str, handler: H, help: str = "") -> None:
        table = self.commands.setdefault(command, {})
        key = subcommand.lower()
        if key in table:
            raise ValueError(f"{command} {subcommand} is registered twice")
        table[key] = Command(handler, help)

    def fallback(self, command: str, handler: H) -> None:
        self.fallbacks[command] = handler

    def lookup(self, command: str, text: str) -> tuple[str, H, str] | None:
        """(sub-command, handler, args) for the typed text, or None (then show help)."""
        words = text.strip().split(maxsplit=1)
        first = words[0].lower() if words else ""
        table = self.commands.get(command, {})
        if first in table:
            return first, table[first].handler, words[1] if len(words) > 1 else ""
        if command in self.fallbacks and text.strip():
            return "", self.fallbacks[command], text.strip()
        return None

    def help_text(self, command: str) -> str:
        table = self.commands.get(command, {})
        lines = [f"`{command} {name}` {entry.help}".rstrip() for name, entry in sorted(
            table.items())]
        return "\n".join(lines) or f"`{command}` has no sub-commands yet."
