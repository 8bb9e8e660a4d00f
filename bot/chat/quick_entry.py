"""Quick time entry as a conversation: text in, a neutral answer (bot.chat.message) out.

The sub-commands (issue 6), added to an adapter's command table by `add_commands`:

- `/time <entry>` logs it (timebot.grammar; several separated by `;`) as the caller, in their
  chat time zone; the answer says how each entry was read, with Undo and Edit actions; an
  ambiguous @target answers with its candidates as actions (PICK_<n>, the candidate's text as
  value: a click logs it);
- `/time list`, `/time edit <n> <entry>`, `/time delete <n>`, `/time undo`,
  `/time week [last]`, `/time help`; `/timesheet submit [last]`, `/timesheet status`.

Everything goes through timebot.timeentry.QuickTime with the person's own key. An answer is
written in the person's language and formats: `QuickEntry.answer` puts them in force; an
adapter wrapping a `Run` itself does so with `with l10n.using(await speaking(runtime, person))`.

How an adapter uses it::

    entry = QuickEntry(runtime, source="teams")
    message = await entry.answer(person, "/time", "2h @acme fixing")   # a Message
    # (a table of its own: add_commands(table, lambda run: run), then answer(…, table))
    # the clicks: entry.undo_record / entry.reading_of / entry.replace / entry.log

(bot.slack.time_commands is the Slack adapter: the registry's handlers, the buttons' listeners
and the Edit modal.)
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from bot.chat.commands import CommandTable
from bot.chat.message import Action, Block, Message, reply
from bot.chat.person import ChatPerson, speaking, who_of
from timebot import l10n
from timebot.l10n import _
from timebot.timeentry import LogResult, Memory, Outcome, QuickTime
from timebot.timeentry.texts import help_text

if TYPE_CHECKING:
    from timebot.runtime import Runtime

UNDO = "timebot_time_undo"
EDIT = "timebot_time_edit"
PICK = "timebot_time_pick"
PICK_PATTERN = re.compile(rf"^{PICK}_\d+$")
MAX_CHOICES = 5

H = TypeVar("H")


def log_message(result: LogResult) -> Message:
    """The answer to `/time <entry>` (pure): each entry as read, with its actions."""
    if result.parse_error is not None:
        text = _("Not understood, nothing logged: {problem}").format(problem=result.parse_error)
        return Message(text, (Block(text, plain=True), Block(
            _("See `/time help` for what I understand."), plain=True)), plain=True)
    blocks: list[Block] = []
    lines: list[str] = []
    for outcome in result.outcomes:
        line = outcome.line()
        lines.append(line)
        blocks.append(Block(line, _outcome_actions(outcome), plain=True))
    return Message("\n".join(lines), tuple(blocks), plain=True)


def _outcome_actions(outcome: Outcome) -> tuple[Action, ...]:
    if outcome.record_id is not None:
        return (Action(UNDO, _("Undo"), outcome.record_id, "danger"),
                Action(EDIT, _("Edit"), outcome.record_id))
    return tuple(Action(f"{PICK}_{i}", choice.label, choice.text)
                 for i, choice in enumerate(outcome.choices[:MAX_CHOICES]))


def _last(args: str) -> bool | None:
    word = args.strip().lower()
    if word in ("", "this"):
        return False
    if word in ("last", "previous", "prev"):
        return True
    return None


class QuickEntry:
    """The sub-commands and the clicks of quick entry, as the person with their own key."""

    def __init__(self, runtime: Runtime, *, source: str) -> None:
        self.runtime = runtime
        self.source = source  # where the entries come from, as recorded ("slack", "teams")
        self.quick = QuickTime(runtime.client, Memory(runtime.state_sessions),
                               runtime.clock.now_ms, runtime.entry_rules)

    async def answer(self, person: ChatPerson, command: str, text: str,
                     table: CommandTable[Run] | None = None) -> Message:
        """The answer to `command text` (e.g. "/time", "2h @acme fixing") in the person's
        language, from `table` (default: quick entry's own, `conversation()`); the table's
        help when the text names no sub-command."""
        table = table if table is not None else conversation()
        found = table.lookup(command, text)
        if found is None:
            return reply(table.help_text(command))
        _name, run, args = found
        with l10n.using(await speaking(self.runtime, person)):
            return await run(self, person, args)

    async def log(self, person: ChatPerson, args: str) -> Message:
        return log_message(await self.quick.log(who_of(person), args, source=self.source))

    async def list(self, person: ChatPerson, args: str) -> Message:
        listing, _ids = await self.quick.recent(who_of(person))
        return reply(_("Your entries (newest first):") + f"\n{listing}\n" + _(
            "Change one with `/time edit <n> <entry>`, remove one with `/time delete <n>`."))

    async def edit(self, person: ChatPerson, args: str) -> Message:
        number, _space, text = args.strip().partition(" ")
        if not number or not text.strip():
            return reply(_("Write `/time edit <n> <entry>`, e.g. `/time edit 2 1h30 @acme`"
                           " (the numbers come from `/time list`)."))
        message, outcome = await self.quick.edit(who_of(person), number, text)
        if outcome is not None and outcome.choices:
            return Message(message, log_message(LogResult((outcome,))).blocks, plain=True)
        return reply(message)

    async def delete(self, person: ChatPerson, args: str) -> Message:
        if not args.strip():
            return reply(_("Write `/time delete <n>` (the numbers come from `/time list`)."))
        return reply(await self.quick.delete(who_of(person), args))

    async def undo(self, person: ChatPerson, args: str) -> Message:
        return reply(await self.quick.undo(who_of(person)))

    async def week(self, person: ChatPerson, args: str) -> Message:
        last = _last(args)
        if last is None:
            return reply(_("Write `/time week` or `/time week last`."))
        return reply(await self.quick.week(who_of(person), last))

    async def help(self, person: ChatPerson, args: str) -> Message:
        return reply(help_text())

    async def submit(self, person: ChatPerson, args: str) -> Message:
        last = _last(args)
        if last is None:
            return reply(_("Write `/timesheet submit` (this week) or `/timesheet submit "
                           "last`."))
        return reply(await self.quick.submit(who_of(person), last))

    async def status(self, person: ChatPerson, args: str) -> Message:
        return reply(await self.quick.status(who_of(person)))

    # --- the clicks ---------------------------------------------------------------------

    async def undo_record(self, person: ChatPerson, record_id: str) -> str:
        """Undo: the entry `record_id` removed (what the answer becomes)."""
        return await self.quick.undo_record(who_of(person), record_id)

    async def reading_of(self, person: ChatPerson, record_id: str) -> str:
        """Edit: the entry as the person would type it (empty when it is gone)."""
        return await self.quick.reading_of(who_of(person), record_id)

    async def replace(self, person: ChatPerson, record_id: str, text: str
                      ) -> tuple[str, Outcome | None]:
        """The Edit form sent: the entry replaced by `text` (outcome None: not replaced)."""
        return await self.quick.replace(who_of(person), record_id, text)


Run = Callable[[QuickEntry, ChatPerson, str], Awaitable[Message]]


def add_commands(table: CommandTable[H], adapt: Callable[[Run], H]) -> None:
    """The quick-entry sub-commands, each run adapted to the table's handler type."""
    table.add("/time", "list", adapt(QuickEntry.list), "your recent entries, numbered")
    table.add("/time", "edit", adapt(QuickEntry.edit),
              "`<n> <entry>` replace entry n of the list")
    table.add("/time", "delete", adapt(QuickEntry.delete), "`<n>` delete entry n of the list")
    table.add("/time", "undo", adapt(QuickEntry.undo), "remove what you logged last")
    table.add("/time", "week", adapt(QuickEntry.week),
              "`[last]` hours by day and project, and status")
    table.add("/time", "help", adapt(QuickEntry.help), "what `/time` understands")
    table.fallback("/time", adapt(QuickEntry.log))
    table.add("/timesheet", "submit", adapt(QuickEntry.submit),
              "`[last]` submit this (last) week")
    table.add("/timesheet", "status", adapt(QuickEntry.status),
              "this and last week's status")


def conversation() -> CommandTable[Run]:
    """The quick-entry table alone, its handlers the runs themselves (for `answer`)."""
    table: CommandTable[Run] = CommandTable()
    add_commands(table, lambda run: run)
    return table
