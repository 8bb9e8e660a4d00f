"""Quick time entry in Slack: `/time …` and `/timesheet submit|status` (issue 6).

Commands (added to bot.slack.commands' registry by `register`):

- `/time <entry>` — logs it (timebot.grammar; several separated by `;`) as the caller, in
  their Slack time zone; the ephemeral answer says how each entry was read, with an Undo and
  an Edit button; an ambiguous @target answers with its candidates as buttons;
- `/time list`, `/time edit <n> <entry>`, `/time delete <n>`, `/time undo`,
  `/time week [last]`, `/time help`; `/timesheet submit [last]`, `/timesheet status`.

The buttons (Undo, Edit, a candidate) and the Edit modal are bolt listeners that `register`
adds to the Slack app. Everything goes through timebot.timeentry.QuickTime with the person's
own key; nothing here talks to the service directly. Every answer is in the person's language
and formats (`speaking`: their localisation, read with their key, in force around the handler).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.slack.commands import CommandContext, CommandRegistry
from bot.slack.deps import SlackDeps
from bot.slack.identity import NotIdentified, SlackPerson
from bot.slack.mrkdwn import escape
from timebot import l10n
from timebot.l10n import _
from timebot.l10n.loading import load_localisation
from timebot.timeentry import LogResult, Memory, QuickTime, Who
from timebot.timeentry.texts import help_text

if TYPE_CHECKING:
    from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncRespond

    from timebot.runtime import Runtime

UNDO = "timebot_time_undo"
EDIT = "timebot_time_edit"
PICK = "timebot_time_pick"
PICK_PATTERN = re.compile(rf"^{PICK}_\d+$")
EDIT_VIEW = "timebot_time_edit_view"
MAX_CHOICES = 5


def who_of(person: SlackPerson) -> Who:
    try:
        zone = ZoneInfo(person.tz or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        zone = ZoneInfo("UTC")
    return Who(person.organisation_id, person.person_id, person.apikey, zone)


async def speaking(runtime: Runtime, person: SlackPerson) -> l10n.Localisation:
    """The person's language and formats (read with their own key; English when unread)."""
    return await load_localisation(runtime.client, person.apikey, person.person_id)


def localised(handler: Callable[[CommandContext], Awaitable[None]]
              ) -> Callable[[CommandContext], Awaitable[None]]:
    """The command's answers in the caller's language."""

    async def run(ctx: CommandContext) -> None:
        with l10n.using(await speaking(ctx.runtime, ctx.person)):
            await handler(ctx)

    return run


def quick(runtime: Runtime) -> QuickTime:
    return QuickTime(runtime.client, Memory(runtime.state_sessions), runtime.clock.now_ms,
                     runtime.entry_rules)


def _section(text: str) -> dict[str, Any]:
    """A section showing the ground's `text` (entries, names: escaped) as typed."""
    return {"type": "section", "text": {"type": "mrkdwn", "text": escape(text[:2900])}}


def _button(text: str, action_id: str, value: str, style: str | None = None
            ) -> dict[str, Any]:
    button: dict[str, Any] = {"type": "button", "action_id": action_id, "value": value[:2000],
                              "text": {"type": "plain_text", "text": text[:75]}}
    if style:
        button["style"] = style
    return button


def log_blocks(result: LogResult) -> tuple[str, list[dict[str, Any]]]:
    """The answer to `/time <entry>` (pure): each entry as read, with its buttons."""
    if result.parse_error is not None:
        text = _("Not understood, nothing logged: {problem}").format(problem=result.parse_error)
        return text, [_section(text), _section(_("See `/time help` for what I understand."))]
    blocks: list[dict[str, Any]] = []
    lines: list[str] = []
    for outcome in result.outcomes:
        line = outcome.line()
        lines.append(line)
        blocks.append(_section(line))
        if outcome.record_id is not None:
            blocks.append({"type": "actions", "elements": [
                _button(_("Undo"), UNDO, outcome.record_id, "danger"),
                _button(_("Edit"), EDIT, outcome.record_id),
            ]})
        elif outcome.choices:
            blocks.append({"type": "actions", "elements": [
                _button(choice.label, f"{PICK}_{i}", choice.text)
                for i, choice in enumerate(outcome.choices[:MAX_CHOICES])
            ]})
    return "\n".join(lines), blocks


async def time_log(ctx: CommandContext) -> None:
    result = await quick(ctx.runtime).log(who_of(ctx.person), ctx.args, source="slack")
    text, blocks = log_blocks(result)
    await ctx.respond(text, blocks)


async def time_list(ctx: CommandContext) -> None:
    listing, _ids = await quick(ctx.runtime).recent(who_of(ctx.person))
    await ctx.respond(_("Your entries (newest first):") + f"\n{listing}\n" + _(
        "Change one with `/time edit <n> <entry>`, remove one with `/time delete <n>`."))


async def time_edit(ctx: CommandContext) -> None:
    number, _space, text = ctx.args.strip().partition(" ")
    if not number or not text.strip():
        await ctx.respond(_("Write `/time edit <n> <entry>`, e.g. `/time edit 2 1h30 @acme`"
                            " (the numbers come from `/time list`)."))
        return
    message, outcome = await quick(ctx.runtime).edit(who_of(ctx.person), number, text)
    result = LogResult((outcome,)) if outcome is not None and outcome.choices else None
    blocks = log_blocks(result)[1] if result is not None else None
    await ctx.respond(message, blocks)


async def time_delete(ctx: CommandContext) -> None:
    if not ctx.args.strip():
        await ctx.respond(_("Write `/time delete <n>` (the numbers come from `/time list`)."))
        return
    await ctx.respond(await quick(ctx.runtime).delete(who_of(ctx.person), ctx.args))


async def time_undo(ctx: CommandContext) -> None:
    await ctx.respond(await quick(ctx.runtime).undo(who_of(ctx.person)))


def _last(args: str) -> bool | None:
    word = args.strip().lower()
    if word in ("", "this"):
        return False
    if word in ("last", "previous", "prev"):
        return True
    return None


async def time_week(ctx: CommandContext) -> None:
    last = _last(ctx.args)
    if last is None:
        await ctx.respond(_("Write `/time week` or `/time week last`."))
        return
    await ctx.respond(await quick(ctx.runtime).week(who_of(ctx.person), last))


async def time_help(ctx: CommandContext) -> None:
    await ctx.respond(help_text())


async def timesheet_submit(ctx: CommandContext) -> None:
    last = _last(ctx.args)
    if last is None:
        await ctx.respond(_("Write `/timesheet submit` (this week) or `/timesheet submit "
                            "last`."))
        return
    await ctx.respond(await quick(ctx.runtime).submit(who_of(ctx.person), last))


async def timesheet_status(ctx: CommandContext) -> None:
    await ctx.respond(await quick(ctx.runtime).status(who_of(ctx.person)))


def add_commands(registry: CommandRegistry) -> None:
    registry.add("/time", "list", localised(time_list), "your recent entries, numbered")
    registry.add("/time", "edit", localised(time_edit),
                 "`<n> <entry>` replace entry n of the list")
    registry.add("/time", "delete", localised(time_delete), "`<n>` delete entry n of the list")
    registry.add("/time", "undo", localised(time_undo), "remove what you logged last")
    registry.add("/time", "week", localised(time_week),
                 "`[last]` hours by day and project, and status")
    registry.add("/time", "help", localised(time_help), "what `/time` understands")
    registry.fallback("/time", localised(time_log))
    registry.add("/timesheet", "submit", localised(timesheet_submit),
                 "`[last]` submit this (last) week")
    registry.add("/timesheet", "status", localised(timesheet_status),
                 "this and last week's status")


# --- buttons and the Edit modal ---------------------------------------------------------------


def edit_view(record_id: str, text: str) -> dict[str, Any]:
    return {
        "type": "modal",
        "callback_id": EDIT_VIEW,
        "private_metadata": record_id,
        "title": {"type": "plain_text", "text": _("Edit entry")},
        "submit": {"type": "plain_text", "text": _("Save")},
        "close": {"type": "plain_text", "text": _("Cancel")},
        "blocks": [{
            "type": "input", "block_id": "entry",
            "label": {"type": "plain_text", "text": _("Entry")},
            "element": {"type": "plain_text_input", "action_id": "value",
                        "initial_value": text},
        }],
    }


class TimeButtons:
    """The listeners of the confirmation's buttons and of the Edit modal."""

    def __init__(self, deps: SlackDeps) -> None:
        self.deps = deps

    async def _person(self, body: dict[str, Any], respond: AsyncRespond) -> SlackPerson | None:
        user_id = str((body.get("user") or {}).get("id", ""))
        try:
            return await self.deps.identity.resolve(user_id)
        except NotIdentified as refusal:
            await respond(text=refusal.message, response_type="ephemeral",
                          replace_original=False)
            return None

    @staticmethod
    def _value(body: dict[str, Any]) -> str:
        actions = body.get("actions") or [{}]
        return str(actions[0].get("value") or "")

    async def on_undo(self, ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond
                       ) -> None:
        await ack()
        person = await self._person(body, respond)
        if person is None:
            return
        with l10n.using(await speaking(self.deps.runtime, person)):
            text = await quick(self.deps.runtime).undo_record(who_of(person), self._value(body))
        await respond(text=escape(text), response_type="ephemeral", replace_original=True)

    async def on_edit(self, ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond
                       ) -> None:
        await ack()
        person = await self._person(body, respond)
        if person is None:
            return
        record_id = self._value(body)
        with l10n.using(await speaking(self.deps.runtime, person)):
            text = await quick(self.deps.runtime).reading_of(who_of(person), record_id)
            if not text:
                await respond(text=_("That entry is gone."), response_type="ephemeral",
                              replace_original=False)
                return
            view = edit_view(record_id, text)
        await self.deps.web.views_open(trigger_id=str(body.get("trigger_id", "")), view=view)

    async def on_pick(self, ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond
                       ) -> None:
        await ack()
        person = await self._person(body, respond)
        if person is None:
            return
        with l10n.using(await speaking(self.deps.runtime, person)):
            result = await quick(self.deps.runtime).log(who_of(person), self._value(body),
                                                        source="slack")
            text, blocks = log_blocks(result)
        await respond(text=escape(text), blocks=blocks, response_type="ephemeral",
                      replace_original=True)

    async def on_edit_submit(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        user_id = str((body.get("user") or {}).get("id", ""))
        view = body.get("view") or {}
        record_id = str(view.get("private_metadata") or "")
        values = (view.get("state") or {}).get("values") or {}
        text = str(((values.get("entry") or {}).get("value") or {}).get("value") or "")
        try:
            person = await self.deps.identity.resolve(user_id)
        except NotIdentified as refusal:
            await ack(response_action="errors", errors={"entry": refusal.message[:150]})
            return
        with l10n.using(await speaking(self.deps.runtime, person)):
            message, outcome = await quick(self.deps.runtime).replace(who_of(person),
                                                                      record_id, text)
        if outcome is None or outcome.record_id is None:
            await ack(response_action="errors", errors={"entry": message[:150]})
            return
        await ack()
        await self.deps.sender.post(user_id, escape(message), key=None)


def register(app: AsyncApp, deps: SlackDeps) -> TimeButtons:
    """Add the commands to the registry, and the buttons' and the Edit modal's listeners to the
    Slack app."""
    add_commands(deps.registry)
    buttons = TimeButtons(deps)
    app.action(UNDO)(buttons.on_undo)
    app.action(EDIT)(buttons.on_edit)
    app.action(PICK_PATTERN)(buttons.on_pick)
    app.view(EDIT_VIEW)(buttons.on_edit_submit)
    return buttons
