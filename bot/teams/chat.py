"""Quick entry in a personal chat with the bot: the neutral quick-entry conversation
(bot.chat.quick_entry, the one Slack's `/time` and `/timesheet` use), typed as plain words —
`3h @acme fixing the header`, `list`, `edit 2 1h30 @acme`, `delete 2`, `undo`, `week [last]`,
`timesheet submit [last]`, `timesheet status`, `timesheet nudges on|off`, `help` (a leading
`time` or `/time` is taken too) — answered as Markdown text in the person's language and formats."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.chat.message import Message
from bot.chat.person import ChatPerson, speaking
from bot.chat.quick_entry import PICK, QuickEntry, conversation
from bot.teams.nudge_settings import TeamsNudgeSettings, nudges_command
from timebot import l10n
from timebot.l10n import N_, _
from timebot.process.runtime import Runtime
from timebot.timeentry.texts import help_text

MENTION = re.compile(r"<at>[^<]*</at>", re.IGNORECASE)
HELP_WORDS = ("", "help", "?", "commands")


@dataclass(frozen=True)
class Command:
    """A word the bot understands; the manifest's command list shows the same."""

    title: str
    description: str


COMMANDS = (
    Command("help", N_("What I understand")),
    Command("list", N_("Your recent entries, numbered")),
    Command("undo", N_("Remove what you logged last")),
    Command("week", N_("Hours by day and project, and the status ([last])")),
    Command("timesheet submit", N_("Submit this week's timesheet ([last])")),
    Command("timesheet status", N_("This and last week's status")),
    Command("timesheet nudges on", N_("Approval nudges back on (or off)")),
)


def text_of(raw: str) -> str:
    """The words typed, without the bot's @mention and the HTML Teams may wrap them in."""
    return " ".join(MENTION.sub(" ", raw or "").replace("&nbsp;", " ").split())


def command_of(text: str) -> tuple[str, str]:
    """The quick-entry command and its text: `timesheet …` is /timesheet, anything else
    /time (a leading `time` or `/time` dropped)."""
    first, _space, rest = text.partition(" ")
    word = first.lower().lstrip("/")
    if word == "timesheet":
        return "/timesheet", rest.strip()
    if word == "time":
        return "/time", rest.strip()
    return "/time", text


def command_list() -> str:
    """`help`: the commands, then what an entry may say (the `/time` help: typed here without
    the command)."""
    lines = [_("Write me an entry, e.g. `3h @acme/website fixing the header`, or one of:")]
    lines += [f"- `{command.title}`: {_(command.description)}" for command in COMMANDS]
    lines += ["- `edit <n> <entry>`, `delete <n>`", "", help_text()]
    return "\n".join(lines)


def text_of_message(message: Message) -> str:
    """A neutral answer as Markdown text: its blocks' texts, an ambiguous entry's candidates
    as the entries to type (the buttons Slack shows)."""
    if not message.blocks:
        return message.text
    lines: list[str] = []
    for block in message.blocks:
        if block.text:
            lines.append(block.text)
        lines += [f"- `{action.value}`" for action in block.actions
                  if action.id.startswith(PICK)]
    return "\n".join(lines)


class QuickChat:
    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.entry = QuickEntry(runtime, source="teams")
        self.table = conversation()
        self.table.add("/timesheet", "nudges", nudges_command(TeamsNudgeSettings(runtime)),
                       "on | off: your approval nudges")

    async def answer(self, person: ChatPerson, raw: str) -> str:
        """The answer to what the person wrote, in their language."""
        command, args = command_of(text_of(raw))
        if command == "/time" and args.lower() in HELP_WORDS:
            with l10n.using(await speaking(self.runtime, person)):
                return command_list()
        message = await self.entry.answer(person, command, args, self.table)
        if message is None:
            with l10n.using(await speaking(self.runtime, person)):
                return command_list()
        return text_of_message(message)
