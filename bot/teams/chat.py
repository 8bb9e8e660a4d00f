"""Quick entry in a personal chat with the bot: what Slack's `/time` and `/timesheet` do, typed
as plain words (`3h @acme fixing the header`, `list`, `edit 2 1h30 @acme`, `delete 2`, `undo`,
`week [last]`, `timesheet submit [last]`, `timesheet status`, `help`), through
timebot.timeentry with the person's own key, answered in their language and formats."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.teams.identity import TeamsPerson
from timebot import l10n
from timebot.l10n import N_, _
from timebot.l10n.loading import load_localisation
from timebot.runtime import Runtime
from timebot.timeentry import LogResult, Memory, QuickTime, Who
from timebot.timeentry.texts import help_text

MENTION = re.compile(r"<at>[^<]*</at>", re.IGNORECASE)


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
)


def text_of(raw: str) -> str:
    """The words typed, without the bot's @mention and the HTML Teams may wrap them in."""
    return " ".join(MENTION.sub(" ", raw or "").replace("&nbsp;", " ").split())


def _last(args: str) -> bool | None:
    word = args.strip().lower()
    if word in ("", "this"):
        return False
    if word in ("last", "previous", "prev"):
        return True
    return None


def command_list() -> str:
    """`help`: the commands, then what an entry may say (the `/time` help without the slash:
    here the words are typed as they are)."""
    lines = [_("Write me an entry, e.g. `3h @acme/website fixing the header`, or one of:")]
    lines += [f"- `{command.title}`: {_(command.description)}" for command in COMMANDS]
    lines += ["- `edit <n> <entry>`, `delete <n>`", "", help_text().replace("/time ", "")]
    return "\n".join(lines)


class QuickChat:
    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def _quick(self) -> QuickTime:
        runtime = self.runtime
        return QuickTime(runtime.client, Memory(runtime.state_sessions), runtime.clock.now_ms,
                         runtime.entry_rules)

    async def answer(self, person: TeamsPerson, raw: str, activity_id: str) -> str:
        """The answer to what the person wrote, in their language."""
        localisation = await load_localisation(self.runtime.client, person.apikey,
                                               person.person_id)
        with l10n.using(localisation):
            return await self._answer(person, text_of(raw), activity_id)

    async def _answer(self, person: TeamsPerson, text: str, activity_id: str) -> str:
        who = Who(person.organisation_id, person.person_id, person.apikey, person.zone)
        quick = self._quick()
        word, _space, rest = text.partition(" ")
        word = word.lower()
        simple: dict[str, Callable[[], Awaitable[str]]] = {
            "undo": lambda: quick.undo(who),
            "status": lambda: quick.status(who),
        }
        if word in ("", "help", "?", "commands"):
            return command_list()
        if word in simple and not rest:
            return await simple[word]()
        if word == "list" and not rest:
            listing, _ids = await quick.recent(who)
            return _("Your entries (newest first):") + f"\n{listing}\n" + _(
                "Change one with `edit <n> <entry>`, remove one with `delete <n>`.")
        if word == "week":
            last = _last(rest)
            if last is None:
                return _("Write `week` or `week last`.")
            return await quick.week(who, last)
        if word == "delete":
            if not rest.strip():
                return _("Write `delete <n>` (the numbers come from `list`).")
            return await quick.delete(who, rest)
        if word == "edit":
            number, _space, entry = rest.partition(" ")
            if not number or not entry.strip():
                return _("Write `edit <n> <entry>`, e.g. `edit 2 1h30 @acme` (the numbers "
                         "come from `list`).")
            message, _outcome = await quick.edit(who, number, entry)
            return message
        if word == "timesheet":
            verb, _space, when = rest.partition(" ")
            if verb.lower() == "status":
                return await quick.status(who)
            if verb.lower() == "submit":
                last = _last(when)
                if last is None:
                    return _("Write `timesheet submit` (this week) or `timesheet submit last`.")
                return await quick.submit(who, last)
            return _("Write `timesheet submit [last]` or `timesheet status`.")
        result = await quick.log(who, text, source="teams", source_key=f"teams:{activity_id}")
        return log_text(result)


def log_text(result: LogResult) -> str:
    if result.parse_error is not None:
        return _("Not understood, nothing logged: {problem}").format(
            problem=result.parse_error) + "\n" + _("Write `help` for what I understand.")
    lines = []
    for outcome in result.outcomes:
        lines.append(outcome.line())
        if outcome.choices:
            lines += [f"- `{choice.text}`" for choice in outcome.choices[:5]]
    return "\n".join(lines)
